import { describe, expect, it } from 'vitest';
import type { ApplyResponseBody } from '../../agent-api/api-types.ts';
import type { AgentCallError } from './agent-call-error.ts';
import type { AgentCallResult, AgentEndpoint } from './agent-client.ts';
import { type ApplyingClient, applyToAgents, backoffMs, callAgents } from './agent-fanout.ts';

const request = { body: Buffer.from('{}'), configDigest: 'sha256:x' };
const response: ApplyResponseBody = {
  changed: true,
  reloaded: true,
  generation: 1,
  configDigest: 'sha256:x',
  durationMs: 1,
};
const endpoint = (name: string): AgentEndpoint => ({ name, host: '127.0.0.1', port: 1 });

function failure(retryable: boolean, reason = 'X'): AgentCallResult<ApplyResponseBody> {
  const error: AgentCallError = { kind: 'connect', reason, message: reason, retryable };
  return { ok: false, error };
}

/** A client whose answers per agent come from a script, one per attempt. */
function scripted(
  script: Record<string, AgentCallResult<ApplyResponseBody>[]>,
): ApplyingClient & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    apply: async (target) => {
      calls.push(target.name);
      await Promise.resolve();
      return script[target.name]?.shift() ?? { ok: true, value: response };
    },
  };
}

const fast = { initialBackoffMs: 1, maxBackoffMs: 2 };

describe('applying to many agents', () => {
  it('returns one result per agent, in the order given', async () => {
    const client = scripted({ b: [failure(false, 'Refused')] });
    const results = await applyToAgents(
      client,
      [endpoint('a'), endpoint('b'), endpoint('c')],
      request,
      fast,
    );
    expect(results.map((result) => [result.endpoint.name, result.ok])).toEqual([
      ['a', true],
      ['b', false],
      ['c', true],
    ]);
  });

  it('retries transient failures and reports the attempts', async () => {
    const client = scripted({ a: [failure(true), failure(true)] });
    const [result] = await applyToAgents(client, [endpoint('a')], request, fast);
    expect(result).toMatchObject({ ok: true, attempts: 3 });
  });

  it('gives up after the attempts allowed, with the last error', async () => {
    const client = scripted({
      a: [failure(true, 'one'), failure(true, 'two'), failure(true, 'three')],
    });
    const [result] = await applyToAgents(client, [endpoint('a')], request, {
      ...fast,
      attempts: 2,
    });
    expect(result).toMatchObject({ ok: false, attempts: 2, error: { reason: 'two' } });
  });

  it('never retries a rejection', async () => {
    const client = scripted({ a: [failure(false, 'ConfigRejected')] });
    const [result] = await applyToAgents(client, [endpoint('a')], request, fast);
    expect(result).toMatchObject({ ok: false, attempts: 1 });
    expect(client.calls).toEqual(['a']);
  });

  it('calls at most `concurrency` agents at once', async () => {
    let running = 0;
    let peak = 0;
    const client: ApplyingClient = {
      apply: async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        return { ok: true, value: response };
      },
    };
    const endpoints = Array.from({ length: 10 }, (_, i) => endpoint(`agent-${i}`));
    const results = await applyToAgents(client, endpoints, request, { concurrency: 3 });
    expect(results.every((result) => result.ok)).toBe(true);
    expect(peak).toBe(3);
  });
});

describe('withdrawing the calls to one agent', () => {
  it('ends the wait before the next attempt at once, without another attempt', async () => {
    const client = scripted({ a: [failure(true, 'ECONNREFUSED')] });
    const withdrawal = new AbortController();
    const pending = callAgents(
      (target) => client.apply(target, request),
      [endpoint('a'), endpoint('b')],
      { initialBackoffMs: 60_000, maxBackoffMs: 60_000 },
      { signalFor: (target) => (target.name === 'a' ? withdrawal.signal : undefined) },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    withdrawal.abort();
    // Within the test's time limit, far below the backoff; how soon: bench/controller-fanout.ts.
    const [a, b] = await pending;
    expect(a).toMatchObject({
      ok: false,
      attempts: 1,
      error: { kind: 'withdrawn', reason: 'Withdrawn' },
    });
    expect(b).toMatchObject({ ok: true, attempts: 1 });
    expect(client.calls).toEqual(['a', 'b']);
  });

  it('makes no call to an agent withdrawn before its turn', async () => {
    const client = scripted({});
    const withdrawn = AbortSignal.abort();
    const seen: string[] = [];
    const results = await callAgents(
      (target) => client.apply(target, request),
      [endpoint('a'), endpoint('b')],
      { concurrency: 1 },
      {
        signalFor: (target) => (target.name === 'b' ? withdrawn : undefined),
        onResult: (result) => seen.push(result.endpoint.name),
      },
    );
    expect(results[1]).toMatchObject({ ok: false, attempts: 0, error: { kind: 'withdrawn' } });
    expect(client.calls).toEqual(['a']);
    expect(seen).toEqual(['a', 'b']);
  });

  it('hands the agent its signal on each attempt', async () => {
    const withdrawal = new AbortController();
    const signals: (AbortSignal | undefined)[] = [];
    await callAgents(
      (_target, options) => {
        signals.push(options.signal);
        return Promise.resolve(failure(true));
      },
      [endpoint('a')],
      fast,
      { signalFor: () => withdrawal.signal },
    );
    expect(signals).toEqual([withdrawal.signal, withdrawal.signal, withdrawal.signal]);
  });
});

describe('backoff between attempts', () => {
  it.each([
    [2, 0, 100],
    [2, 0.999, 200],
    [3, 0.999, 400],
    [6, 0.999, 1_999],
  ])('before attempt %i with jitter %f waits %i ms', (attempt, random, expected) => {
    expect(backoffMs(attempt, { random: () => random })).toBe(expected);
  });
});
