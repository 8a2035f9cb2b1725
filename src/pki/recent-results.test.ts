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
