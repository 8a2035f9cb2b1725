import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mappedReusing, sharedEnds, sortedEdit, sortedReusing } from './sorted-reuse.ts';

const byValue = (a: { v: number }, b: { v: number }): number => a.v - b.v;

describe('sortedReusing', () => {
  it('equals a sort from nothing, whatever the previous sorted list held', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 2000 }), { minLength: 100, maxLength: 300 }),
        fc.array(fc.boolean(), { maxLength: 300 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 100 }), { maxLength: 6 }),
        (values, keep, fresh) => {
          const objects = values.map((v) => ({ v }));
          const previous = sortedReusing(objects, undefined, byValue);
          const current = [
            ...objects.filter((_, i) => keep[i] !== false),
            ...fresh.map((v) => ({ v: v * 20 + 0.5 })),
          ];
          const sorted = [...current].sort(byValue);
          expect(sortedReusing(current, previous, byValue).items).toEqual(sorted);
          expect(sortedReusing(current, undefined, byValue).items).toEqual(sorted);
        },
      ),
    );
  });

  it('keeps the very objects of the previous list, and the list itself when nothing changed', () => {
    const a = { v: 1 };
    const b = { v: 3 };
    const c = { v: 2 };
    const previous = sortedReusing([b, a], undefined, byValue);
    const sorted = sortedReusing([b, a, c], previous, byValue);
    expect(sorted.items).toEqual([a, c, b]);
    expect(sorted.items[0]).toBe(a);
    expect(sortedReusing([a, c, b], sorted, byValue).items).toBe(sorted.items);
  });
});

describe('sortedEdit', () => {
  it('equals a sort from nothing of the previous list without the removed and with the added', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 2000 }), { maxLength: 300 }),
        fc.array(fc.boolean(), { maxLength: 300 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 100 }), { maxLength: 6 }),
        (values, keep, fresh) => {
          const objects = values.map((v) => ({ v }));
          const previous = sortedReusing(objects, undefined, byValue);
          const removed = new Set(objects.filter((_, i) => keep[i] === false));
          const added = fresh.map((v) => ({ v: v * 20 + 0.5 }));
          const edited = sortedEdit(previous, removed, added, byValue);
          const current = [...objects.filter((item) => !removed.has(item)), ...added];
          expect(edited.items).toEqual([...current].sort(byValue));
          expect([...edited.members].sort(byValue)).toEqual([...current].sort(byValue));
          // The edited list is where the next sort of a similar list starts from.
          expect(sortedReusing(current, edited, byValue).items).toEqual(edited.items);
        },
      ),
    );
  });

  it('splices a few changes into a long list where a sort from nothing puts them', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 5000 }), { minLength: 300, maxLength: 600 }),
        fc.uniqueArray(fc.nat({ max: 299 }), { maxLength: 4 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 250 }), { maxLength: 4 }),
        (values, gone, fresh) => {
          const objects = values.map((v) => ({ v }));
          const previous = sortedReusing(objects, undefined, byValue);
          const removed = new Set(gone.map((index) => objects[index] ?? { v: -1 }));
          const added = fresh.map((v) => ({ v: v * 20 + 0.5 }));
          const current = [...objects.filter((item) => !removed.has(item)), ...added];
          expect(sortedEdit(previous, removed, added, byValue).items).toEqual(
            [...current].sort(byValue),
          );
        },
      ),
    );
    // An item to remove that the list does not hold is no item of it: merged past.
    const previous = sortedReusing(
      Array.from({ length: 300 }, (_, v) => ({ v })),
      undefined,
      byValue,
    );
    const stranger = { v: 7 };
    expect(sortedEdit(previous, new Set([stranger]), [], byValue).items).toEqual(previous.items);
  });

  it('is the previous list itself when nothing is removed or added', () => {
    const previous = sortedReusing([{ v: 2 }, { v: 1 }], undefined, byValue);
    expect(sortedEdit(previous, new Set(), [], byValue)).toBe(previous);
  });
});

describe('mappedReusing', () => {
  it('equals mapping the list from nothing, whatever list was mapped last', () => {
    const pool = Array.from({ length: 12 }, (_, v) => ({ v }));
    const made = new Map(pool.map((item) => [item, { made: item.v }]));
    const list = fc.array(fc.constantFrom(...pool), { maxLength: 20 });
    fc.assert(
      fc.property(fc.array(list, { minLength: 1, maxLength: 8 }), (lists) => {
        let last: ReturnType<typeof mappedReusing<{ v: number }, { made: number }>> | undefined;
        let calls = 0;
        for (const next of lists) {
          last = mappedReusing(next, last, (item) => {
            calls += 1;
            return made.get(item) ?? { made: -1 };
          });
          expect(last.items).toEqual(next.map((item) => made.get(item)));
        }
        expect(calls).toBeLessThanOrEqual(lists.reduce((sum, next) => sum + next.length, 0));
      }),
    );
  });

  it('maps only the items between the ends an edited list shares with the last', () => {
    const pool = Array.from({ length: 6 }, (_, v) => ({ v }));
    const first = mappedReusing(pool, undefined, (item) => item.v);
    const edited = [...pool.slice(0, 2), { v: 10 }, ...pool.slice(3)];
    const mapped: number[] = [];
    const next = mappedReusing(edited, first, (item) => {
      mapped.push(item.v);
      return item.v;
    });
    expect(next.items).toEqual([0, 1, 10, 3, 4, 5]);
    expect(mapped).toEqual([10]);
    expect(sharedEnds(pool, edited)).toEqual({ head: 2, tail: 3 });
    expect(mappedReusing(edited, next, () => -1)).toBe(next);
  });
});
