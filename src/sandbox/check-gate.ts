/**
 * Bounded concurrency in two lanes: at most `concurrent` tasks run, at most `waiting` more wait
 * in each lane in order; beyond that a task is refused at once (the caller answers "busy"), so a
 * flood of requests neither piles up memory nor starves the checks already admitted.
 *
 * The lanes keep admission reviews from starving delivery. Anyone who reaches the webhook can
 * have checks run, and a review that fills the sandbox kept the reconciler's check waiting (2
 * running, 16 waiting: "The check sandbox is busy"). So a `delivery` task (the reconciler's,
 * an agent's) goes before every waiting `review` task, and reviews hold at most
 * `concurrent - 1` slots: one is always free for delivery, or, with a single slot, delivery
 * waits for one review at most, whose check ends at its admission deadline.
 *
 * A waiting task whose caller is gone (`signal` aborted) leaves its lane without running.
 */

/** Whose check it is: what will be delivered, or an admission review. */
export type CheckLane = 'delivery' | 'review';

export const checkLanes: readonly CheckLane[] = ['delivery', 'review'];

export interface GateOptions {
  /** @default 'delivery' */
  readonly lane?: CheckLane;
  /** Aborted when the caller is gone: a task still waiting then never runs. */
  readonly signal?: AbortSignal;
}

interface Waiter {
  readonly lane: CheckLane;
  readonly admit: (admitted: boolean) => void;
}

export class CheckGate {
  readonly #concurrent: number;
  readonly #waiting: number;
  readonly #reviewSlots: number;
  #running = 0;
  #reviews = 0;
  readonly #queues: Readonly<Record<CheckLane, Waiter[]>> = { delivery: [], review: [] };

  constructor(concurrent: number, waiting: number) {
    this.#concurrent = concurrent;
    this.#waiting = waiting;
    this.#reviewSlots = Math.max(1, concurrent - 1);
  }

  /**
   * Runs `task` when a slot of its lane is free; undefined (without running it) when its lane's
   * queue is full or its caller went away while it waited.
   */
  async run<T>(task: () => Promise<T>, options: GateOptions = {}): Promise<T | undefined> {
    const lane = options.lane ?? 'delivery';
    const { signal } = options;
    if (signal?.aborted === true) return undefined;
    const queue = this.#queues[lane];
    let abandon = (): void => undefined;
    const admitted = await new Promise<boolean>((resolve) => {
      const waiter: Waiter = { lane, admit: resolve };
      queue.push(waiter);
      this.#admitWaiting();
      const leave = (): void => {
        const index = queue.indexOf(waiter);
        if (index === -1) return;
        queue.splice(index, 1);
        resolve(false);
      };
      if (queue.length > this.#waiting) leave();
      abandon = leave;
      signal?.addEventListener('abort', abandon, { once: true });
    });
    signal?.removeEventListener('abort', abandon);
    if (!admitted) return undefined;
    try {
      return await task();
    } finally {
      this.#running -= 1;
      if (lane === 'review') this.#reviews -= 1;
      this.#admitWaiting();
    }
  }

  /** Starts waiting tasks while slots are free: delivery first, reviews up to their share. */
  #admitWaiting(): void {
    while (this.#running < this.#concurrent) {
      const delivery = this.#queues.delivery.shift();
      const next =
        delivery ?? (this.#reviews < this.#reviewSlots ? this.#queues.review.shift() : undefined);
      if (next === undefined) return;
      this.#running += 1;
      if (next.lane === 'review') this.#reviews += 1;
      next.admit(true);
    }
  }

  /** Checks running and waiting now, in all and by lane. */
  load(): {
    readonly running: number;
    readonly waiting: number;
    readonly reviews: { readonly running: number; readonly waiting: number };
  } {
    const { delivery, review } = this.#queues;
    return {
      running: this.#running,
      waiting: delivery.length + review.length,
      reviews: { running: this.#reviews, waiting: review.length },
    };
  }
}
