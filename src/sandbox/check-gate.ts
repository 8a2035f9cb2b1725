/**
 * Bounded concurrency: at most `concurrent` tasks run, at most `waiting` more wait in order;
 * beyond that a task is refused at once (the caller answers "busy"), so a flood of requests
 * neither piles up memory nor starves the checks already admitted.
 */
export class CheckGate {
  readonly #concurrent: number;
  readonly #waiting: number;
  #running = 0;
  readonly #queue: (() => void)[] = [];

  constructor(concurrent: number, waiting: number) {
    this.#concurrent = concurrent;
    this.#waiting = waiting;
  }

  /** Runs `task` when a slot is free; undefined (without running it) when the queue is full. */
  async run<T>(task: () => Promise<T>): Promise<T | undefined> {
    if (this.#running >= this.#concurrent) {
      if (this.#queue.length >= this.#waiting) return undefined;
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    } else {
      this.#running += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.#queue.shift();
      // The slot passes to the next waiting task, or is freed.
      if (next === undefined) this.#running -= 1;
      else next();
    }
  }

  /** Checks running and waiting now. */
  load(): { readonly running: number; readonly waiting: number } {
    return { running: this.#running, waiting: this.#queue.length };
  }
}
