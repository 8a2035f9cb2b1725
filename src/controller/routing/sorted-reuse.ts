/**
 * Sorting a list that differs little from one sorted before: the items still present keep
 * their order from the previous list, and the few new ones are sorted and merged in by the
 * same order. The result equals sorting `items` from nothing whenever `order` is total on
 * distinct items (no two distinct items compare equal), which is what callers guarantee.
 */

/** A sorted list and its members, which the next sort of a similar list starts from. */
export interface SortedList<T> {
  readonly items: readonly T[];
  readonly members: ReadonlySet<T>;
}

/** A sorted list whose members are gathered when first asked for (sortedEdit's never are). */
function lazyList<T>(items: readonly T[]): SortedList<T> {
  let members: ReadonlySet<T> | undefined;
  return {
    items,
    get members(): ReadonlySet<T> {
      members ??= new Set(items);
      return members;
    },
  };
}

/** Where `item` is, or would go, in `items` sorted by `order`: the first index not before it. */
function position<T>(items: readonly T[], item: T, order: (a: T, b: T) => number): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (order(items[middle] as T, item) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Changes per this many kept items, at most, that are spliced in rather than merged. */
const spliceRatio = 64;

/**
 * `previous` without the items of `removed` and with `added` (items it does not hold, each
 * once) merged in by `order`: the same list as sorting the result from nothing, without
 * gathering its members. A few changes are spliced in where a binary search finds their
 * places (a copy of the list, then a move of its rest per change); more are merged in one
 * pass. Nothing removed or added: `previous`.
 */
export function sortedEdit<T>(
  previous: SortedList<T>,
  removed: ReadonlySet<T>,
  added: readonly T[],
  order: (a: T, b: T) => number,
): SortedList<T> {
  if (removed.size === 0 && added.length === 0) return previous;
  const adding = [...added].sort(order);
  if ((removed.size + adding.length) * spliceRatio <= previous.items.length) {
    const result = previous.items.slice();
    let found = true;
    for (const item of removed) {
      const at = position(result, item, order);
      if (result[at] !== item) {
        found = false;
        break;
      }
      result.splice(at, 1);
    }
    if (found) {
      for (const item of adding) result.splice(position(result, item, order), 0, item);
      return lazyList(result);
    }
  }
  return lazyList(merged(previous.items, (item) => !removed.has(item), adding, order));
}

/** The items of `sorted` that `keep` keeps, with `adding` (sorted) merged in by `order`. */
function merged<T>(
  sorted: readonly T[],
  keep: (item: T) => boolean,
  adding: readonly T[],
  order: (a: T, b: T) => number,
): T[] {
  const result: T[] = [];
  let next = 0;
  for (const item of sorted) {
    if (!keep(item)) continue;
    for (let add = adding[next]; add !== undefined && order(add, item) < 0; add = adding[next]) {
      result.push(add);
      next += 1;
    }
    result.push(item);
  }
  for (; next < adding.length; next += 1) {
    const add = adding[next];
    if (add !== undefined) result.push(add);
  }
  return result;
}

/** A new item per this many kept ones, at most, before merging costs more than sorting. */
const mergeRatio = 16;

export function sortedReusing<T>(
  items: Iterable<T>,
  previous: SortedList<T> | undefined,
  order: (a: T, b: T) => number,
): SortedList<T> {
  const members = new Set(items);
  if (previous === undefined) return { items: [...members].sort(order), members };
  const before = previous.members;
  const added: T[] = [];
  for (const item of members) if (!before.has(item)) added.push(item);
  if (added.length === 0 && members.size === before.size) {
    return { items: previous.items, members };
  }
  if (added.length * mergeRatio > members.size) return { items: [...members].sort(order), members };
  added.sort(order);
  return { items: merged(previous.items, (item) => members.has(item), added, order), members };
}

/**
 * How many items two lists share at the start and, after those, at the end: the same values
 * (an object is the same only as itself, and context items are never changed once made).
 */
export function sharedEnds(
  last: readonly unknown[],
  next: readonly unknown[],
): { head: number; tail: number } {
  if (last === next) return { head: next.length, tail: 0 };
  const most = Math.min(last.length, next.length);
  let head = 0;
  while (head < most && last[head] === next[head]) head += 1;
  let tail = 0;
  while (tail < most - head && last[last.length - 1 - tail] === next[next.length - 1 - tail])
    tail += 1;
  return { head, tail };
}

/** A list and what was made of its items, which the next similar list starts from. */
export interface MappedList<K, V> {
  readonly list: readonly K[];
  readonly items: readonly V[];
}

/**
 * `list.map(make)` for a `make` that gives the same value for the same item, reusing what was
 * made for `last` at the ends the two lists share (sharedEnds): an edited list maps only the
 * items between.
 */
export function mappedReusing<K, V>(
  list: readonly K[],
  last: MappedList<K, V> | undefined,
  make: (item: K) => V,
): MappedList<K, V> {
  if (last?.list === list) return last;
  const { head, tail } = last === undefined ? { head: 0, tail: 0 } : sharedEnds(last.list, list);
  const kept = last?.items ?? [];
  const items = kept
    .slice(0, head)
    .concat(list.slice(head, list.length - tail).map(make), kept.slice(kept.length - tail));
  return { list, items };
}
