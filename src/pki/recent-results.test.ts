import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecentResults } from './recent-results.ts';

/** A memory of capacity 2 and a record of the keys it computed. */
function counted(): { readonly results: RecentResults<string>; readonly computed: string[] } {
  const results = new RecentResults<string>(2);
  const computed: string[] = [];
  return { results, computed };
}

function ask(memory: ReturnType<typeof counted>, key: string): string {
  return memory.results.remember(key, () => {
    memory.computed.push(key);
    return `value of ${key}`;
  });
}

describe('RecentResults', () => {
  it('computes a key once and answers it from memory afterwards', () => {
    const memory = counted();
    expect(ask(memory, 'a')).toBe('value of a');
    expect(ask(memory, 'a')).toBe('value of a');
    expect(memory.computed).toEqual(['a']);
  });

  it('forgets the least recently used key beyond its capacity, so memory stays bounded', () => {
    const memory = counted();
    for (const key of ['a', 'b', 'a', 'c', 'a', 'b']) ask(memory, key);
    // 'a' was used again before 'c' arrived, so 'b' went; asking for 'b' computes it again.
    expect(memory.computed).toEqual(['a', 'b', 'c', 'b']);
  });

  it('remembers nothing when the computation throws', () => {
    const memory = counted();
    expect(() =>
      memory.results.remember('bad', () => {
        throw new Error('undecodable');
      }),
    ).toThrow('undecodable');
    expect(ask(memory, 'bad')).toBe('value of bad');
    expect(memory.computed).toEqual(['bad']);
  });
});

describe('RecentResults against a plain least-recently-used model', () => {
  it('computes exactly the keys the model misses, over any sequence and capacity', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.string({ maxLength: 3 }), { maxLength: 300 }),
        (capacity, keys) => {
          const results = new RecentResults<string>(capacity);
          const model = new Map<string, string>();
          for (const key of keys) {
            let computed = false;
            const value = results.remember(key, () => {
              computed = true;
              return `value of ${key}`;
            });
            expect(value).toBe(`value of ${key}`);
            const known = model.has(key);
            expect(computed).toBe(!known);
            model.delete(key);
            model.set(key, value);
            if (model.size > capacity) model.delete(model.keys().next().value ?? '');
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses a capacity that is not a positive whole number', () => {
    expect(() => new RecentResults(0)).toThrow(RangeError);
    expect(() => new RecentResults(1.5)).toThrow(RangeError);
  });
});
