import { describe, expect, it } from 'vitest';
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
});
