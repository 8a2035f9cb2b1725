import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalNode } from '../../dev/lib/local-node.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the run's shared node. */
    kubeconfig: string;
    /** `helm --set` pairs that run HAProxy from the product image on the node. */
    haproxyImageValues: string[];
  }
}

/**
 * One real node per integration run (dev/lib/node), with the product image imported: Jobs,
 * CronJobs, Deployments and Services work as in any cluster; each test uses its own namespace.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), 'haptic-it-'));
  const local = await startLocalNode(dir);
  project.provide('kubeconfig', local.kubeconfigPath);
  project.provide('haproxyImageValues', [...local.haproxyImageValues]);
  return async () => {
    await local.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
