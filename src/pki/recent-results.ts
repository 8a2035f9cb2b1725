/**
 * A bounded memory of computed results by key: the least recently used entry goes once
 * `capacity` is exceeded, so hostile input (a stream of never-seen certificates or Secrets)
 * cannot grow memory without bound. Only results are remembered; a computation that throws
 * leaves nothing behind.
 */
export class RecentResults<V> {
  readonly #capacity: number;
  readonly #entries = new Map<string, V>();

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The result for `key`, computed by `compute` the first time (or after it was forgotten). */
  remember(key: string, compute: () => V): V {
    const hit = this.#entries.get(key);
    if (hit !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit;
    }
    const value = compute();
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    return value;
  }
}
