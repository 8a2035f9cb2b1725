/**
 * What a direct loop (direct-loop.ts) emitted in its last render: the list, the text,
 * and after each item the length of the text so far and the memory units (Liquid's
 * `memoryLimit`) its items used so far. The next render of a list that shares items with it
 * at its ends (sharedEnds: the same objects, which the model and the render process's decoder
 * keep for what did not change) takes those spans of this text at once and renders only the
 * items between: a review that adds one map line renders one item, not the thousands around
 * it. A body's text depends on its item alone (bodyIsPure), so a span's text is what
 * rendering its items again would give. An item of the last list met between the ends (the
 * next review changed another Ingress) is found by an index made at the first such meeting.
 */
export class LoopText {
  readonly items: readonly unknown[];
  readonly text: string;
  /** After item i: the text's length, and the units used, up to and including it. */
  readonly #ends: readonly number[];
  readonly #units: readonly number[];
  #index: Map<unknown, number> | undefined;

  constructor(
    items: readonly unknown[],
    text: string,
    ends: readonly number[],
    units: readonly number[],
  ) {
    this.items = items;
    this.text = text;
    this.#ends = ends;
    this.#units = units;
  }

  /** The memory units items [from, to) used. */
  unitsOf(from: number, to: number): number {
    return (this.#units[to - 1] ?? 0) - (this.#units[from - 1] ?? 0);
  }

  /** Where item `index`'s text ends: the text's length up to it (0 for -1, before the first). */
  endOf(index: number): number {
    return this.#ends[index] ?? 0;
  }

  /** Item `index`'s own text and units. */
  fragment(index: number): { readonly text: string; readonly units: number } {
    return {
      text: this.text.slice(this.endOf(index - 1), this.endOf(index)),
      units: this.unitsOf(index, index + 1),
    };
  }

  /** Where each item is in the list, for items met again away from the shared ends. */
  indexOf(item: unknown): number | undefined {
    this.#index ??= new Map(this.items.map((each, index) => [each, index]));
    return this.#index.get(item);
  }

  /** Appends the totals of items [from, to), shifted, to `ends` and `units`. */
  copyTotals(
    from: number,
    to: number,
    shift: number,
    unitShift: number,
    ends: number[],
    units: number[],
  ): void {
    for (let index = from; index < to; index += 1) {
      ends.push((this.#ends[index] ?? 0) + shift);
      units.push((this.#units[index] ?? 0) + unitShift);
    }
  }
}

/** Builds the LoopText of a render, item by item or a span of the last one at a time. */
export class LoopTextBuilder {
  #text = '';
  #units = 0;
  readonly #ends: number[] = [];
  readonly #unitsAfter: number[] = [];

  get text(): string {
    return this.#text;
  }

  /** One item's text and the units its render used. */
  add(text: string, units: number): void {
    this.#text += text;
    this.#units += units;
    this.#ends.push(this.#text.length);
    this.#unitsAfter.push(this.#units);
  }

  /** Items [from, to) of `last`, their text and units as they were. */
  addSpan(last: LoopText, from: number, to: number): void {
    if (to <= from) return;
    const startLength = last.endOf(from - 1);
    const shift = this.#text.length - startLength;
    const unitShift = this.#units - last.unitsOf(0, from);
    this.#text += last.text.slice(startLength, last.endOf(to - 1));
    last.copyTotals(from, to, shift, unitShift, this.#ends, this.#unitsAfter);
    this.#units = this.#unitsAfter.at(-1) ?? 0;
  }

  done(items: readonly unknown[]): LoopText {
    return new LoopText(items, this.#text, this.#ends, this.#unitsAfter);
  }
}
