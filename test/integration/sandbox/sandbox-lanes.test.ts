/**
 * The check sandbox's lanes and callers, on a real `haptic sandbox serve` with real HAProxy:
 * review checks never take the slot delivery keeps, a check whose caller closes its
 * connection is killed at once, and a lane it does not know is refused naming the lanes.
 */
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSandbox, startLocalSandbox } from '../../../dev/lib/local-sandbox.ts';
import { type CheckFile, checkHAProxyConfig } from '../../../src/sandbox/check-client.ts';
import { eventually } from '../../support/eventually.ts';

const head = `global
  maxconn 100
defaults
  mode http
  timeout client 5s
  timeout connect 5s
  timeout server 5s
frontend web
  bind 127.0.0.1:18080
  default_backend app
backend app
  server app 127.0.0.1:9000
`;

/** Seconds of haproxy -c: eight backends of 8,191 servers (what the lint still allows). */
function heavy(tag: string): CheckFile[] {
  const backends = Array.from(
    { length: 8 },
    (_, index) => `backend b${String(index)}\n  server-template s 1-8191 10.0.0.1:80\n`,
  );
  return [{ path: 'haproxy.cfg', content: Buffer.from(`${head}${backends.join('')}# ${tag}\n`) }];
}

const dir = mkdtempSync(join(tmpdir(), 'haptic-sandbox-lanes-'));
// The sandbox's user (65534 when started as root) must reach it.
const workDir = mkdtempSync(join(tmpdir(), 'haptic-sandbox-lanes-work-'));
let sandbox: LocalSandbox;

beforeAll(async () => {
  chmodSync(workDir, 0o1777);
  sandbox = await startLocalSandbox({
    dir,
    extraArgs: [`--work-dir=${workDir}`, '--max-concurrent=2', '--max-waiting=4'],
  });
});

afterAll(async () => {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
});

/** PIDs of the sandbox's haproxy processes. */
function checksRunning(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        return (
          args.some((arg) => arg.startsWith(`${workDir}/`)) &&
          args.some((arg) => arg.endsWith('haproxy'))
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Waits until the sandbox runs a check (`true`) or none (`false`); the time it took, in ms. */
async function checksUntil(what: string, running: boolean, ms: number): Promise<number> {
  const started = performance.now();
  await eventually(
    what,
    () => Promise.resolve(checksRunning()),
    (pids) => (running ? pids.length > 0 : pids.length === 0),
    ms,
  );
  return performance.now() - started;
}

describe('check sandbox lanes', () => {
  it("answers delivery's check while review checks fill every slot they may and wait", async () => {
    const gone = new AbortController();
    const reviews = Array.from({ length: 4 }, (_, index) =>
      checkHAProxyConfig(heavy(`review ${String(index)}`), {
        socket: sandbox.socket,
        lane: 'review',
        signal: gone.signal,
      }),
    );
    await checksUntil('a review check runs', true, 10_000);
    const started = performance.now();
    const delivered = await checkHAProxyConfig(
      [{ path: 'haproxy.cfg', content: Buffer.from(head) }],
      { socket: sandbox.socket },
    );
    const ms = performance.now() - started;
    console.log(`delivery check beside review checks: ${ms.toFixed(0)} ms`);
    expect(delivered).toEqual({ ok: true });
    // One review ran all along (the other slot is delivery's); the rest still wait.
    expect(checksRunning()).toHaveLength(1);
    gone.abort();
    const answers = await Promise.all(reviews);
    expect(answers.every((answer) => !answer.ok && answer.failure === 'unavailable')).toBe(true);
    const killedMs = await checksUntil('review checks stopped', false, 2_000);
    console.log(`review checks stopped ${killedMs.toFixed(0)} ms after their callers left`);
    expect(readFileSync(sandbox.logFile, 'utf8')).toContain('check dropped: its caller is gone');
  }, 60_000);

  it('kills a check whose caller closes the connection', async () => {
    const gone = new AbortController();
    const answer = checkHAProxyConfig(heavy('left'), {
      socket: sandbox.socket,
      signal: gone.signal,
    });
    await checksUntil('the check runs', true, 10_000);
    gone.abort();
    expect(await answer).toMatchObject({ ok: false, failure: 'unavailable' });
    // At once: not when the check ends by itself (seconds) nor at the sandbox's time limit.
    expect(await checksUntil('the check stopped', false, 1_000)).toBeLessThan(1_000);
  }, 30_000);

  it('refuses a lane it does not know, naming the lanes', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const call = request(
        {
          socketPath: sandbox.socket,
          method: 'POST',
          path: '/v1/check?lane=urgent',
          headers: { 'content-type': 'application/json' },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
          });
        },
      );
      call.on('error', reject);
      call.end('{"files":[]}');
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain(
      'lane=urgent is not a lane of the check sandbox; use delivery or review.',
    );
  });
});
