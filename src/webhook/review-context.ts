/**
 * What a validator knows of the review it answers: when the answer must be sent, and whether
 * anyone still waits for it. The API server gives up on a webhook after the registration's
 * timeoutSeconds (or sooner, when the write's own deadline is nearer) and says how long it
 * waits in the `timeout` query parameter of each call (`/validate?timeout=10s`, a Go duration
 * rounded up to whole seconds). Work for an answer no one reads (a check that would run on
 * after that) is stopped: it only takes time from the next review and from delivery.
 */

export interface ReviewContext {
  /** `performance.now()` by which the answer must be sent. */
  readonly deadline: number;
  /** Aborted once the answer is sent, the deadline passed, or the caller went away. */
  readonly signal: AbortSignal;
}

const unitMs: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000_001,
};

/** A Go duration (`10s`, `1m0s`, `1.5s`) in milliseconds, or undefined. */
function goDurationMs(text: string): number | undefined {
  if (text.length === 0 || text.length > 32) return undefined;
  let ms = 0;
  let read = 0;
  for (const match of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) {
    if (match.index !== read) return undefined;
    const [whole, value = '', unit = ''] = match;
    ms += Number(value) * (unitMs[unit] ?? Number.NaN);
    read += whole.length;
  }
  return read === text.length && Number.isFinite(ms) ? ms : undefined;
}

/**
 * How long the API server waits for this answer, from the request's `timeout` parameter, or
 * undefined when there is none (a caller other than the API server). The value is its time left
 * rounded up to whole seconds, so up to a second less may be left: the wait is a second shorter
 * (half of it, for a timeout of two seconds or less).
 */
export function apiServerWaitMs(timeout: unknown): number | undefined {
  if (typeof timeout !== 'string') return undefined;
  const ms = goDurationMs(timeout);
  if (ms === undefined || ms <= 0) return undefined;
  return ms > 2_000 ? ms - 1_000 : ms / 2;
}
