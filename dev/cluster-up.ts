// make cluster-up: a local control plane and hook-Job runner that stay running.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startLocalCluster } from './lib/local-cluster.ts';
import { projectRoot } from './lib/tools.ts';

const dir = join(projectRoot, '.cluster');
if (existsSync(join(dir, 'pids'))) {
  process.stderr.write(
    '.cluster/pids exists: the cluster is already up (make cluster-down first).\n',
  );
  process.exit(1);
}
rmSync(dir, { recursive: true, force: true });
const started = performance.now();
const cluster = await startLocalCluster(dir, null);
const pids = [...cluster.controlPlane.processes, cluster.runner].map((p) => p.pid);
writeFileSync(join(dir, 'pids'), `${pids.join('\n')}\n`);
process.stdout.write(
  `control plane ready in ${((performance.now() - started) / 1000).toFixed(1)} s at ${cluster.controlPlane.server}\n` +
    `  export KUBECONFIG=${cluster.controlPlane.kubeconfigPath}\n` +
    `  hook-Job runner log: ${cluster.runnerLogPath}\n`,
);
process.exit(0);
