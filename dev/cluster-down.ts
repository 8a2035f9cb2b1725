// make cluster-down: stops what make cluster-up started; leaves no process behind.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { killGroup } from './lib/supervised-process.ts';
import { projectRoot } from './lib/tools.ts';

const pidFile = join(projectRoot, '.cluster', 'pids');
if (!existsSync(pidFile)) {
  process.stdout.write('no local cluster is running\n');
  process.exit(0);
}
const pids = readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number).reverse();
for (const pid of pids) killGroup(pid, 'SIGTERM');
const deadline = Date.now() + 15_000;
while (pids.some(isRunning) && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 100));
}
for (const pid of pids) killGroup(pid, 'SIGKILL');
rmSync(pidFile);
process.stdout.write('local cluster stopped\n');

/** Alive and not a zombie (an exited child nobody has reaped yet holds no resources). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
