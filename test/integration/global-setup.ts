import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { imageArchivePath, readChartImage } from '../../dev/lib/chart-image.ts';
import { startLocalNode } from '../../dev/lib/local-node.ts';
import { containerdSocket } from '../../dev/lib/node/node-config.ts';
import { nodeRunning } from '../../dev/lib/node/node-host.ts';
import { importImage } from '../../dev/lib/node/node-images.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the run's shared node. */
    kubeconfig: string;
  }
}

/**
 * One real node per integration run (dev/lib/node), with the product image imported: Jobs,
 * CronJobs, Deployments and Services work as in any cluster; each test uses its own namespace.
 * With HAPTIC_TEST_KUBECONFIG set, the run uses the node `make cluster-up` keeps instead (its
 * admin kubeconfig), so several runs can share one node while developing; the node outlives them.
 * The run imports the current product image (`make image`) into it first, so Pods run this code.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shared = process.env.HAPTIC_TEST_KUBECONFIG;
  if (shared !== undefined && shared !== '') {
    if (!nodeRunning() || !existsSync(shared)) {
      throw new Error(
        `HAPTIC_TEST_KUBECONFIG=${shared} names no running node: start one with make cluster-up, or unset it.`,
      );
    }
    const image = readChartImage();
    await importImage(containerdSocket, imageArchivePath(image));
    project.provide('kubeconfig', shared);
    return () => Promise.resolve();
  }
  const dir = mkdtempSync(join(tmpdir(), 'haptic-it-'));
  const local = await startLocalNode(dir);
  project.provide('kubeconfig', local.kubeconfigPath);
  return async () => {
    await local.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
