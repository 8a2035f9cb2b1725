import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { imageArchivePath, readChartImage } from './chart-image.ts';
import { clusterCidrs } from './cluster-network.ts';
import { holdUnreachableRoutes } from './local-routes.ts';
import { startNode, type RealNode } from './node/start-node.ts';
import type { SupervisedProcess } from './supervised-process.ts';

export interface LocalNode {
  readonly node: RealNode;
  /** Admin kubeconfig of the node's API server. */
  readonly kubeconfigPath: string;
  /** `<repository>:<tag>` of the product image imported into the node. */
  readonly image: string;
  stop(): Promise<void>;
}

/**
 * The real node (dev/lib/node) as tests, `make cluster-up` and `make demo` use it: the local
 * ranges routed unreachable on the host first (local-routes.ts: a packet for an address no one
 * here holds fails at once), then the node, then the product image (`make image`) imported, so
 * the chart's default image runs without a registry.
 */
export async function startLocalNode(dir: string, ownerPid = process.pid): Promise<LocalNode> {
  const image = readChartImage();
  const archive = imageArchivePath(image);
  if (!existsSync(archive)) {
    throw new Error(`${archive} is missing: the node runs the product image; run \`make image\`.`);
  }
  mkdirSync(dir, { recursive: true });
  const routes: SupervisedProcess = await holdUnreachableRoutes(
    clusterCidrs,
    join(dir, 'cluster-routes.log'),
    ownerPid,
  );
  let node: RealNode;
  try {
    node = await startNode({ dir: join(dir, 'node'), ownerPid });
  } catch (error) {
    await routes.stop();
    throw error;
  }
  const stop = async (): Promise<void> => {
    await node.stop();
    await routes.stop();
  };
  try {
    await node.importImage(archive);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    node,
    kubeconfigPath: node.kubeconfigPath,
    image: image.reference,
    stop,
  };
}
