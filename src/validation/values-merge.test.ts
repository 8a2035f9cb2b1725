import { describe, expect, it } from 'vitest';
import { parseValues } from './parse-values.ts';
import { coalesceValues, mergeValueLayers } from './values-merge.ts';

describe('values merge (helm semantics)', () => {
  it('merges files in order: maps recursively, lists and scalars replaced', () => {
    expect(
      mergeValueLayers([
        { a: { b: 1, c: [1, 2] }, d: 'x' },
        { a: { c: [3] }, d: 'y' },
      ]),
    ).toEqual({ a: { b: 1, c: [3] }, d: 'y' });
  });

  it('keeps a null from a later file so it can remove a default', () => {
    expect(mergeValueLayers([{ a: 1 }, { a: null }])).toEqual({ a: null });
  });

  it('coalesces user values over defaults, a null removing the key', () => {
    expect(
      coalesceValues({ a: { b: null, c: 2 }, e: { f: null, g: 1 } }, { a: { b: 1, d: 3 }, h: 4 }),
    ).toEqual({ a: { c: 2, d: 3 }, e: { g: 1 }, h: 4 });
  });

  it('keeps a __proto__ key as a key, as helm does: nothing is read through a prototype', () => {
    const parsed = parseValues('__proto__:\n  injected: yes\nreal: 1\n', 'values file f');
    if (!parsed.ok) throw new Error(parsed.finding.message);
    const merged = mergeValueLayers([{ real: 0 }, parsed.values]);
    const coalesced = coalesceValues(merged, { injected: false, real: 2 });
    for (const values of [merged, coalesced]) {
      expect(Object.getPrototypeOf(values)).toBe(Object.prototype);
      expect(Object.hasOwn(values, '__proto__')).toBe(true);
    }
    expect((merged as { injected?: unknown }).injected).toBeUndefined();
    expect(coalesced).toMatchObject({ injected: false, real: 1 });
    // What helm is sent has the key too.
    expect(JSON.parse(JSON.stringify(coalesced))).toEqual(
      JSON.parse('{"__proto__":{"injected":true},"real":1,"injected":false}'),
    );
  });
});
