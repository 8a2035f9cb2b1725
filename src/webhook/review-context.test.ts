import { describe, expect, it } from 'vitest';
import { apiServerWaitMs } from './review-context.ts';

describe("the API server's wait, from its timeout parameter", () => {
  it.each([
    ['10s', 9_000],
    ['5s', 4_000],
    ['1m0s', 59_000],
    ['2.5s', 1_500],
    ['2s', 1_000],
    ['1s', 500],
    ['1500ms', 750],
  ])(
    '%s: a second less (it is rounded up to whole seconds), or half of two or less',
    (timeout, ms) => {
      expect(apiServerWaitMs(timeout)).toBe(ms);
    },
  );

  it.each([
    [undefined],
    [''],
    ['0s'],
    ['10'],
    ['s'],
    ['10 s'],
    ['-5s'],
    ['10sx'],
    [['10s', '1s']],
    ['9'.repeat(40) + 's'],
  ])('is unknown for %j (our own deadline applies)', (timeout) => {
    expect(apiServerWaitMs(timeout)).toBeUndefined();
  });
});
