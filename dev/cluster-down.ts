// make cluster-down: stops the node make cluster-up started (its keeper takes every part down and
// removes what the node created on the machine); with no keeper left, removes whatever a
// killed node left behind.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanNodeHost, keeperPidFile as pidFile, nodeRunning } from './lib/node/node-host.ts';

const keeper = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : undefined;
/** Alive and still the keeper (a PID in a stale file may belong to anything by now). */
const alive = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${String(pid)}/cmdline`, 'utf8').includes('node-keeper.ts');
  } catch {
    return false;
  }
};
const started = performance.now();
const running = keeper !== undefined && alive(keeper);
if (running) {
  process.kill(keeper, 'SIGTERM');
  const deadline = Date.now() + 20_000;
  while (alive(keeper) && Date.now() < deadline) await sleep(100);
  if (alive(keeper)) process.kill(keeper, 'SIGKILL');
}
rmSync(pidFile, { force: true });
// A killed keeper's holder is still cleaning up; give it the time its watchdog gives it.
const deadline = Date.now() + 10_000;
while (running && nodeRunning() && Date.now() < deadline) await sleep(100);
// After the keeper, or without one: nothing of a node may remain.
const cleaned = cleanNodeHost();
if (!cleaned.ok) {
  process.stderr.write(`${cleaned.message}\n`);
  process.exit(1);
}
process.stdout.write(
  running
    ? `node stopped in ${((performance.now() - started) / 1000).toFixed(1)} s\n`
    : 'no node was running; anything a killed one left behind is gone\n',
);
