import { join } from 'node:path';
import { startControlPlane, type ControlPlane } from './control-plane.ts';
import { projectRoot } from './tools.ts';
import { startSupervised, type SupervisedProcess } from './supervised-process.ts';

export interface LocalCluster {
  readonly controlPlane: ControlPlane;
  readonly runner: SupervisedProcess;
  /** The runner's log: one JSON line per Job it ran, in order, with the exit code. */
  readonly runnerLogPath: string;
  /** Per-Job logs live in `<jobsDir>/<namespace>/<job>.log`. */
  readonly jobsDir: string;
  stop(): Promise<void>;
}

/** The control plane plus the hook-Job runner beside it, as `make cluster-up` and tests use them. */
export async function startLocalCluster(
  dir: string,
  ownerPid: number | null = process.pid,
): Promise<LocalCluster> {
  const controlPlane = await startControlPlane({ dir, ownerPid });
  const jobsDir = join(dir, 'jobs');
  const runner = startSupervised({
    name: 'job-runner',
    command: process.execPath,
    args: [join(projectRoot, 'dev/job-runner.ts'), controlPlane.kubeconfigPath, jobsDir],
    logFile: join(dir, 'logs', 'job-runner.log'),
    ownerPid,
  });
  return {
    controlPlane,
    runner,
    runnerLogPath: join(jobsDir, 'runner.log'),
    jobsDir,
    async stop() {
      await runner.stop();
      await controlPlane.stop();
    },
  };
}
