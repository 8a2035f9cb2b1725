import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The project root (this file lives in dev/lib/). */
export const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

/** The tools dev/install-tools.sh builds from their pinned Go modules. */
export type PinnedTool =
  | 'etcd'
  | 'kube-apiserver'
  | 'kubectl'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubelet'
  | 'kube-proxy'
  | 'helm'
  | 'helm4'
  | 'umoci'
  | 'registry'
  | 'kube-score'
  | 'source-controller'
  | 'helm-controller'
  | 'argocd'
  | 'cert-manager-controller'
  | 'cert-manager-cainjector';

/** Where a pinned tool lives in .tools/bin, whether or not it is there yet. */
export function pinnedToolBin(name: PinnedTool): string {
  return `${projectRoot}.tools/bin/${name}`;
}

/**
 * Absolute path of a pinned tool built by dev/install-tools.sh into .tools/bin. Throws with
 * the fix when it is missing, rather than silently picking up another version from PATH.
 */
export function toolPath(name: PinnedTool): string {
  const path = pinnedToolBin(name);
  if (!existsSync(path)) {
    throw new Error(`${path} is missing; run \`make setup\` (dev/install-tools.sh) first.`);
  }
  return path;
}
