/**
 * Applying one configuration (or one runtime change) to many agents in parallel, each with its own deadline and
 * retries with exponential backoff (for transient failures only), and a result per agent.
 * One slow or failing agent never holds up the others' results.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApplyResponseBody } from '../../agent-api/api-types.ts';
import { type AgentCallError, withdrawnError } from './agent-call-error.ts';
import type { EncodedApply } from '../../agent-api/apply-encoding.ts';
import type { AgentCallResult, AgentClient, AgentEndpoint, CallOptions } from './agent-client.ts';

export interface FanOutOptions {
  /** Attempts per agent, the first included. @default 3 */
  readonly attempts?: number;
  /** Wait before the second attempt; doubles after each. @default 200 ms */
  readonly initialBackoffMs?: number;
  /** @default 2 seconds */
  readonly maxBackoffMs?: number;
  /** Deadline of each attempt. @default 30 seconds */
  readonly timeoutMs?: number;
  /** Agents called at once. @default 16 */
  readonly concurrency?: number;
  /** Randomness for the backoff jitter, in [0, 1). @default Math.random */
  readonly random?: () => number;
}

export type AgentApplyResult =
  | {
      readonly endpoint: AgentEndpoint;
      readonly ok: true;
      readonly response: ApplyResponseBody;
      readonly attempts: number;
    }
  | {
      readonly endpoint: AgentEndpoint;
      readonly ok: false;
      readonly error: AgentCallError;
      readonly attempts: number;
    };

/** Backoff before attempt `attempt` (2, 3, ...): exponential, capped, with jitter in [½, 1]. */
export function backoffMs(attempt: number, options: FanOutOptions): number {
  const base = Math.min(
    (options.initialBackoffMs ?? 200) * 2 ** (attempt - 2),
    options.maxBackoffMs ?? 2_000,
  );
  return Math.round(base * (0.5 + (options.random ?? Math.random)() / 2));
}

/** What the fan-out needs of a client. */
export type ApplyingClient = Pick<AgentClient, 'apply'>;

/** One call to one agent: an apply, or a runtime change. */
export type AgentCall = (
  endpoint: AgentEndpoint,
  options: CallOptions,
) => Promise<AgentCallResult<ApplyResponseBody>>;

/** What a round of calls is told, and tells, about each agent as it goes. */
export interface FanOutRound {
  /**
   * Withdraws the calls to one agent (for example, its Pod left discovery): the attempt in
   * flight and the wait before the next end at once, with the error kind `withdrawn`.
   */
  readonly signalFor?: (endpoint: AgentEndpoint) => AbortSignal | undefined;
  /** Each agent's result, as soon as it has answered or its attempts are spent. */
  readonly onResult?: (result: AgentApplyResult) => void;
}

async function callOne(
  call: AgentCall,
  endpoint: AgentEndpoint,
  options: FanOutOptions,
  signal: AbortSignal | undefined,
): Promise<AgentApplyResult> {
  const attempts = Math.max(1, options.attempts ?? 3);
  for (let attempt = 1; ; attempt += 1) {
    if (signal?.aborted === true) {
      return { endpoint, ok: false, error: withdrawnError(endpoint.name), attempts: attempt - 1 };
    }
    const result = await call(endpoint, {
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(signal === undefined ? {} : { signal }),
    });
    if (result.ok) return { endpoint, ok: true, response: result.value, attempts: attempt };
    if (!result.error.retryable || attempt >= attempts) {
      return { endpoint, ok: false, error: result.error, attempts: attempt };
    }
    await sleep(
      backoffMs(attempt + 1, options),
      undefined,
      signal === undefined ? {} : { signal },
    ).catch(() => undefined);
  }
}

/** Makes `call` to every endpoint; results in the order of `endpoints`. */
export async function callAgents(
  call: AgentCall,
  endpoints: readonly AgentEndpoint[],
  options: FanOutOptions = {},
  round: FanOutRound = {},
): Promise<readonly AgentApplyResult[]> {
  const results: AgentApplyResult[] = new Array<AgentApplyResult>(endpoints.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < endpoints.length) {
      const index = next;
      next += 1;
      const endpoint = endpoints[index];
      if (endpoint === undefined) continue;
      const result = await callOne(call, endpoint, options, round.signalFor?.(endpoint));
      results[index] = result;
      round.onResult?.(result);
    }
  };
  const workers = Math.min(Math.max(1, options.concurrency ?? 16), endpoints.length);
  await Promise.all(Array.from({ length: workers }, worker));
  return results;
}

/** Applies `request` to every endpoint; results in the order of `endpoints`. */
export async function applyToAgents(
  client: ApplyingClient,
  endpoints: readonly AgentEndpoint[],
  request: EncodedApply,
  options: FanOutOptions = {},
): Promise<readonly AgentApplyResult[]> {
  return callAgents(
    (endpoint, callOptions) => client.apply(endpoint, request, callOptions),
    endpoints,
    options,
  );
}
