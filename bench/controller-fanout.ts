/**
 * How soon the delivery's fan-out lets go of an agent whose calls are withdrawn (its Pod went
 * away) while it waits before the next attempt: the wait is a 60 s backoff, and the withdrawal
 * must end it at once, with no further attempt, while the other agent's call completes
 * (agent-fanout.test.ts checks the outcome; this, the time). Columns: milliseconds from the
 * withdrawal to the round's results, median and worst of `runs`. Goal: well under 10 s (the
 * backoff is 60 s).
 *
 *   node bench/controller-fanout.ts [runs=50]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApplyResponseBody } from '../src/agent-api/api-types.ts';
import type { AgentCallResult, AgentEndpoint } from '../src/controller/delivery/agent-client.ts';
import { callAgents } from '../src/controller/delivery/agent-fanout.ts';

const runs = Number(process.argv[2] ?? 50);
const response: ApplyResponseBody = {
  changed: true,
  reloaded: true,
  generation: 1,
  configDigest: 'sha256:x',
  durationMs: 1,
};
const refused: AgentCallResult<ApplyResponseBody> = {
  ok: false,
  error: { kind: 'connect', reason: 'ECONNREFUSED', message: 'refused', retryable: true },
};
const endpoint = (name: string): AgentEndpoint => ({ name, host: '127.0.0.1', port: 1 });

/** One round: agent a refuses once (then waits 60 s), b answers; a is withdrawn after 20 ms. */
async function withdrawalMs(): Promise<number> {
  const withdrawal = new AbortController();
  const pending = callAgents(
    async (target) => {
      await Promise.resolve();
      return target.name === 'a' ? refused : { ok: true, value: response };
    },
    [endpoint('a'), endpoint('b')],
    { initialBackoffMs: 60_000, maxBackoffMs: 60_000 },
    { signalFor: (target) => (target.name === 'a' ? withdrawal.signal : undefined) },
  );
  await sleep(20);
  const withdrawn = performance.now();
  withdrawal.abort();
  const [a, b] = await pending;
  const ms = performance.now() - withdrawn;
  if (a?.ok !== false || a.error.kind !== 'withdrawn' || a.attempts !== 1 || b?.ok !== true) {
    throw new Error('the withdrawn round did not end as agent-fanout.test.ts expects');
  }
  return ms;
}

const times: number[] = [];
for (let run = 0; run < runs; run += 1) times.push(await withdrawalMs());
times.sort((x, y) => x - y);
const median = times[Math.floor(times.length / 2)] ?? 0;
const worst = times.at(-1) ?? 0;
process.stdout.write('withdrawal to results: median ms  worst ms\n');
process.stdout.write(`${median.toFixed(2).padStart(31)}  ${worst.toFixed(2).padStart(8)}\n`);
