/**
 * Where the Kubernetes client configuration comes from, in kubectl's order: `--kubeconfig`,
 * `$KUBECONFIG`, `~/.kube/config`, then the Pod's ServiceAccount (in-cluster). Unlike
 * `KubeConfig.loadFromDefault`, a machine with none of them is an error, not a silent
 * `http://localhost:8080`.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { HapticError, describeError, errorCodes } from '../errors.ts';

/** The token file the kubelet mounts into Pods that automount their ServiceAccount token. */
const serviceAccountTokenPath = '/var/run/secrets/kubernetes.io/serviceaccount/token';

function load(what: string, fill: (kc: KubeConfig) => void): KubeConfig {
  const kc = new KubeConfig();
  try {
    fill(kc);
  } catch (error) {
    throw new HapticError(
      errorCodes.KUBE_CONFIG_MISSING,
      `Cannot load the Kubernetes client configuration from ${what}: ${describeError(error)}`,
      { cause: error },
    );
  }
  if (kc.getCurrentCluster() === null) {
    throw new HapticError(
      errorCodes.KUBE_CONFIG_MISSING,
      `The Kubernetes client configuration from ${what} has no current context with a cluster; set current-context.`,
    );
  }
  return kc;
}

/**
 * Loads the client configuration; `path` is a kubeconfig file given on the command line and
 * wins over everything else. Throws `KUBE_CONFIG_MISSING` naming the source and the fix.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  if (path !== undefined && path !== '') {
    return load(`--kubeconfig ${path}`, (kc) => {
      kc.loadFromFile(path);
    });
  }
  const fromEnv = process.env.KUBECONFIG;
  if (fromEnv !== undefined && fromEnv !== '') {
    return load(`KUBECONFIG=${fromEnv}`, (kc) => {
      kc.loadFromDefault();
    });
  }
  const home = process.env.HOME ?? homedir();
  const userConfig = join(home, '.kube', 'config');
  if (existsSync(userConfig)) {
    return load(userConfig, (kc) => {
      kc.loadFromFile(userConfig);
    });
  }
  if (existsSync(serviceAccountTokenPath)) {
    return load('the Pod ServiceAccount', (kc) => {
      kc.loadFromCluster();
    });
  }
  throw new HapticError(
    errorCodes.KUBE_CONFIG_MISSING,
    'No Kubernetes client configuration: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a Pod with a ServiceAccount token.',
  );
}
