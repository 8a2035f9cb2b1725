/**
 * How much the webhook holds at once: requests whose body is being read or whose review runs,
 * counted and weighed by their declared length. Anyone who reaches the webhook can send
 * reviews (the API server sends them without a client certificate), so without a bound a
 * flood of large bodies filled the controller's memory, and a flood of small ones queued
 * renders without end. A request that does not fit is answered at once, its body unread.
 */
export interface InFlightLimits {
  /** Requests read or reviewed at once. @default 256 */
  readonly requests: number;
  /** Sum of their declared lengths. @default 64 MiB (eight bodies of the largest size) */
  readonly bytes: number;
}

export const defaultInFlightLimits: InFlightLimits = { requests: 256, bytes: 64 * 1024 * 1024 };

export class InFlightBudget {
  readonly limits: InFlightLimits;
  #requests = 0;
  #bytes = 0;

  constructor(limits: InFlightLimits = defaultInFlightLimits) {
    this.limits = limits;
  }

  /**
   * Takes room for a request of `bytes`; false when it does not fit beside those held. A
   * request alone always fits (the body limit bounds it), so a large one cannot starve.
   */
  take(bytes: number): boolean {
    const alone = this.#requests === 0;
    if (
      !alone &&
      (this.#requests >= this.limits.requests || this.#bytes + bytes > this.limits.bytes)
    )
      return false;
    this.#requests += 1;
    this.#bytes += bytes;
    return true;
  }

  /** Gives back what `take(bytes)` took. */
  give(bytes: number): void {
    this.#requests -= 1;
    this.#bytes -= bytes;
  }
}
