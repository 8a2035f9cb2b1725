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
import { fluxNamespace } from './flux-controllers.ts';
import { applicationNamespace } from './haproxy-traffic.ts';
import { releaseName, releaseNamespace } from './stable-secrets.ts';

export interface LifecycleCluster {
  readonly cli: ClusterCli;
  /** The product image as the node has it imported (the sample backend runs it). */
  readonly image: string;
  readonly shared: boolean;
  stop(): Promise<void>;
}

/**
 * Removes the release and the suite's namespaces (a shared node outlives the run). The Flux
 * objects lose their finalizers first: their controllers may be stopped already; helm
 * uninstall removes the release itself.
 */
export async function removeSuiteObjects(cli: ClusterCli): Promise<void> {
  for (const kind of [
    'helmreleases.helm.toolkit.fluxcd.io',
    'ocirepositories.source.toolkit.fluxcd.io',
  ]) {
    const found = await cli.kubectlTry([
      'get',
      kind,
      releaseName,
      '-n',
      fluxNamespace,
      '-o',
      'name',
    ]);
    if (found.code !== 0) continue;
    await cli.kubectl([
      ...['patch', kind, releaseName, '-n', fluxNamespace, '--type=merge'],
      ...['-p', '{"metadata":{"finalizers":null}}'],
    ]);
    await cli.kubectl(['delete', kind, releaseName, '-n', fluxNamespace, '--ignore-not-found']);
  }
  await cli.helm([
    'uninstall',
    releaseName,
    '-n',
    releaseNamespace,
    '--ignore-not-found',
    '--wait',
  ]);
  await cli.kubectl([
    ...['delete', 'namespace', releaseNamespace, applicationNamespace, fluxNamespace],
    ...['--ignore-not-found', '--timeout=3m'],
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
    return { cli, image: image.reference, shared: true, stop: () => removeSuiteObjects(cli) };
  }
  const local = await startLocalNode(join(dir, 'node'));
  return {
    cli: clusterCli(local.kubeconfigPath),
    image: local.image,
    shared: false,
    stop: () => local.stop(),
  };
}
