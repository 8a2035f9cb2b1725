/**
 * The full client's configuration from the source `kubeConfigSource` picks. Unlike
 * `KubeConfig.loadFromDefault`, a machine with none of them is an error, not a silent
 * `http://localhost:8080`.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { kubeConfigSource } from './config-source.ts';

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
  const source = kubeConfigSource(path);
  switch (source.kind) {
    case 'flag':
      return load(`--kubeconfig ${source.path}`, (kc) => {
        kc.loadFromFile(source.path);
      });
    case 'env':
      return load(`KUBECONFIG=${source.value}`, (kc) => {
        kc.loadFromDefault();
      });
    case 'user':
      return load(source.path, (kc) => {
        kc.loadFromFile(source.path);
      });
    case 'service-account':
      return load('the Pod ServiceAccount', (kc) => {
        kc.loadFromCluster();
      });
    case 'none':
      throw new HapticError(
        errorCodes.KUBE_CONFIG_MISSING,
        'No Kubernetes client configuration: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a Pod with a ServiceAccount token.',
      );
  }
}
