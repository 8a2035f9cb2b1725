/**
 * Which Kubernetes client configuration applies, in kubectl's order: `--kubeconfig`,
 * `$KUBECONFIG`, `~/.kube/config`, then the Pod's ServiceAccount (in-cluster). The one
 * definition both the full client's loader (`kube-config.ts`) and the light reader
 * (`kube-access.ts`) follow.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where the kubelet mounts an automounted ServiceAccount. */
export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

export type KubeConfigSource =
  | { readonly kind: 'flag'; readonly path: string }
  | { readonly kind: 'env'; readonly value: string }
  | { readonly kind: 'user'; readonly path: string }
  | { readonly kind: 'service-account' }
  | { readonly kind: 'none' };

/** The source that applies; `path` is a kubeconfig file given on the command line. */
export function kubeConfigSource(path?: string): KubeConfigSource {
  if (path !== undefined && path !== '') return { kind: 'flag', path };
  const fromEnv = process.env.KUBECONFIG;
  if (fromEnv !== undefined && fromEnv !== '') return { kind: 'env', value: fromEnv };
  const userConfig = join(process.env.HOME ?? homedir(), '.kube', 'config');
  if (existsSync(userConfig)) return { kind: 'user', path: userConfig };
  if (existsSync(join(serviceAccountDir, 'token'))) return { kind: 'service-account' };
  return { kind: 'none' };
}
