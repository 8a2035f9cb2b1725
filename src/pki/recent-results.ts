/**
 * A bounded memory of computed results by key: the least recently used entry goes once
 * `capacity` is exceeded, so hostile input (a stream of never-seen certificates or Secrets)
 * cannot grow memory without bound. Only results are remembered; a computation that throws
 * leaves nothing behind.
 *
 * Its storage is allocated once, at its full size, and an entry that goes is overwritten in
 * place. A Map under steady insertion and deletion rehashes into new tables, and each retired
 * table keeps its entries and points to its successor; once a retired table sits in the old
 * generation, every young collection counts it as a root, so every result ever remembered
 * survived into the old generation (over a megabyte a collection in the webhook), to be freed
 * only by a full collection. Here a result that goes dies young.
 */
export class RecentResults<V> {
  readonly #capacity: number;
  /** Open-addressing table: entry index + 1 per slot, 0 for an empty slot. */
  readonly #slots: Int32Array;
  readonly #keys: (string | undefined)[];
  readonly #values: (V | undefined)[];
  /** The use order, as a list of entry indexes (-1 ends it). */
  readonly #newer: Int32Array;
  readonly #older: Int32Array;
  #newest = -1;
  #oldest = -1;
  #size = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive whole number, not ${String(capacity)}`);
    }
    this.#capacity = capacity;
    // At most half full, so probe runs stay short.
    this.#slots = new Int32Array(2 ** Math.ceil(Math.log2(capacity * 2)));
    this.#keys = Array.from({ length: capacity }, () => undefined);
    this.#values = Array.from({ length: capacity }, () => undefined);
    this.#newer = new Int32Array(capacity).fill(-1);
    this.#older = new Int32Array(capacity).fill(-1);
  }

  /** The result for `key`, computed by `compute` the first time (or after it was forgotten). */
  remember(key: string, compute: () => V): V {
    const slot = this.#find(key);
    const found = (this.#slots[slot] ?? 0) - 1;
    if (found >= 0) {
      this.#unlink(found);
      this.#link(found);
      return this.#values[found] as V;
    }
    const value = compute();
    this.#insert(key, value);
    return value;
  }

  /** FNV-1a of the key's UTF-16 units, within the table. */
  #home(key: string): number {
    let hash = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
    return (hash >>> 0) & (this.#slots.length - 1);
  }

  /** The slot holding `key`, or the empty slot where it would go. */
  #find(key: string): number {
    const mask = this.#slots.length - 1;
    for (let slot = this.#home(key); ; slot = (slot + 1) & mask) {
      const entry = (this.#slots[slot] ?? 0) - 1;
      if (entry < 0 || this.#keys[entry] === key) return slot;
    }
  }

  #insert(key: string, value: V): void {
    let entry: number;
    if (this.#size < this.#capacity) entry = this.#size++;
    else {
      entry = this.#oldest;
      this.#remove(entry);
    }
    this.#keys[entry] = key;
    this.#values[entry] = value;
    this.#slots[this.#find(key)] = entry + 1;
    this.#link(entry);
  }

  /** Takes the entry out of the table and the use order (backward-shift deletion). */
  #remove(entry: number): void {
    const key = this.#keys[entry] ?? '';
    const mask = this.#slots.length - 1;
    let hole = this.#find(key);
    for (let slot = (hole + 1) & mask; ; slot = (slot + 1) & mask) {
      const moved = (this.#slots[slot] ?? 0) - 1;
      if (moved < 0) break;
      const home = this.#home(this.#keys[moved] ?? '');
      // Move it back when its home does not lie in the run between the hole and it.
      if (((slot - home) & mask) >= ((slot - hole) & mask)) {
        this.#slots[hole] = moved + 1;
        hole = slot;
      }
    }
    this.#slots[hole] = 0;
    this.#unlink(entry);
    this.#keys[entry] = undefined;
    this.#values[entry] = undefined;
  }

  #link(entry: number): void {
    this.#older[entry] = this.#newest;
    this.#newer[entry] = -1;
    if (this.#newest >= 0) this.#newer[this.#newest] = entry;
    this.#newest = entry;
    if (this.#oldest < 0) this.#oldest = entry;
  }

  #unlink(entry: number): void {
    const newer = this.#newer[entry] ?? -1;
    const older = this.#older[entry] ?? -1;
    if (newer >= 0) this.#older[newer] = older;
    else this.#newest = older;
    if (older >= 0) this.#newer[older] = newer;
    else this.#oldest = newer;
  }
}
