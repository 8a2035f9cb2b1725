/**
 * The cluster a lifecycle run uses: the node `make cluster-up` keeps when
 * HAPTIC_TEST_KUBECONFIG names it (as the integration tests share it; the product image is
 * imported again and what a previous run left in the suite's namespaces is removed first),
 * else a real node of its own (dev/lib/local-node.ts), stopped at the end.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { imageArchivePath, readChartImage } from '../lib/chart-image.ts';
import { startLocalNode } from '../lib/local-node.ts';
import { containerdSocket } from '../lib/node/node-config.ts';
import { nodeRunning } from '../lib/node/node-host.ts';
import { importImage } from '../lib/node/node-images.ts';
import { clusterCli, type ClusterCli } from './cluster-cli.ts';
import { argoNamespace } from './argo-controllers.ts';
import { certManagerNamespace } from './cert-manager-controllers.ts';
import { removeArgoObjects } from './argo-provider.ts';
import { fluxNamespace } from './flux-controllers.ts';
import { removeFluxObjects } from './flux-provider.ts';
import { applicationNamespace } from './haproxy-traffic.ts';
import { releaseName, releaseNamespace } from './stable-secrets.ts';

export interface LifecycleCluster {
  readonly cli: ClusterCli;
  /** The product image as the node has it imported (the sample backend runs it). */
  readonly image: string;
  readonly shared: boolean;
  /** Removes what the suite created (on a shared node; a node of its own is stopped whole). */
  clean(): Promise<void>;
  stop(): Promise<void>;
}

/** The cluster-scoped objects of the release (IngressClass, webhook configuration, RBAC). */
const clusterScopedKinds =
  'ingressclass,validatingwebhookconfiguration,clusterrole,clusterrolebinding';

/**
 * Removes the release and the suite's namespaces (a shared node outlives the run): each
 * engine's objects first, then the release's cluster-scoped objects by the chart's instance
 * label, then the namespaces.
 */
export async function removeSuiteObjects(cli: ClusterCli): Promise<void> {
  await removeFluxObjects(cli);
  await removeArgoObjects(cli);
  await cli.kubectl([
    ...['delete', clusterScopedKinds, '--ignore-not-found'],
    `-l=app.kubernetes.io/instance=${releaseName}`,
  ]);
  await cli.kubectl([
    ...['delete', 'namespace', releaseNamespace, applicationNamespace],
    ...[fluxNamespace, argoNamespace, certManagerNamespace, '--ignore-not-found', '--timeout=3m'],
  ]);
}

export async function lifecycleCluster(dir: string): Promise<LifecycleCluster> {
  const image = readChartImage();
  const shared = process.env.HAPTIC_TEST_KUBECONFIG;
  if (shared !== undefined && shared !== '') {
    if (!nodeRunning() || !existsSync(shared)) {
      throw new Error(
        `HAPTIC_TEST_KUBECONFIG=${shared} names no running node: start one with make cluster-up, or unset it.`,
      );
    }
    await importImage(containerdSocket, imageArchivePath(image));
    const cli = clusterCli(shared);
    await removeSuiteObjects(cli);
    return {
      cli,
      image: image.reference,
      shared: true,
      clean: () => removeSuiteObjects(cli),
      stop: () => Promise.resolve(),
    };
  }
  const local = await startLocalNode(join(dir, 'node'));
  return {
    cli: clusterCli(local.kubeconfigPath),
    image: local.image,
    shared: false,
    clean: () => Promise.resolve(),
    stop: () => local.stop(),
  };
}
