import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../fixtures/start-control-plane.ts', import.meta.url));

/** Processes of a process group that still run (zombies excluded: they hold nothing). */
function runningInGroup(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return state !== 'Z' && Number(group) === pgid;
      } catch {
        return false;
      }
    });
}

describe('process hygiene', () => {
  it('stops the route holder, etcd and kube-apiserver when the test run that owns them is SIGKILLed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leak-'));
    const child = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pids = await new Promise<number[]>((resolve, reject) => {
      child.stdout.once('data', (chunk: Buffer) => {
        resolve(JSON.parse(chunk.toString()) as number[]);
      });
      child.once('exit', (code) => {
        reject(new Error(`control plane script exited with ${String(code)}`));
      });
    });
    expect(pids).toHaveLength(3); // route holder, etcd, kube-apiserver
    for (const pid of pids) expect(runningInGroup(pid).length).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await expect
      .poll(() => pids.flatMap(runningInGroup), { timeout: 15_000, interval: 250 })
      .toEqual([]);
  });
});
