import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalCluster } from '../../dev/lib/local-cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the run's shared control plane. */
    kubeconfig: string;
    /** JSON lines, one per Job the hook-Job runner ran. */
    runnerLog: string;
    /** Per-Job logs: `<jobsDir>/<namespace>/<job>.log`. */
    jobsDir: string;
  }
}

/** One control plane and hook-Job runner per integration run; each test uses its own namespace. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), 'haptic-it-'));
  const cluster = await startLocalCluster(dir);
  project.provide('kubeconfig', cluster.controlPlane.kubeconfigPath);
  project.provide('runnerLog', cluster.runnerLogPath);
  project.provide('jobsDir', cluster.jobsDir);
  return async () => {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
