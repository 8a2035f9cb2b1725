import { describe, expect, it } from 'vitest';
import { formatUtcTimestamp, parseUtcTimestamp } from './utc-timestamp.ts';

describe('parseUtcTimestamp', () => {
  it.each([
    ['2030-03-01T12:00:00Z', '2030-03-01T12:00:00.000Z'],
    ['2030-03-01T12:00:00.5Z', '2030-03-01T12:00:00.500Z'],
    ['2028-02-29T23:59:59Z', '2028-02-29T23:59:59.000Z'],
  ])('reads %s', (text, iso) => {
    expect(parseUtcTimestamp(text)?.toISOString()).toBe(iso);
  });

  it.each([
    ['an offset other than Z', '2030-03-01T12:00:00+00:00'],
    ['a lower-case z', '2030-03-01T12:00:00z'],
    ['a space for the T', '2030-03-01 12:00:00Z'],
    ['a day that does not exist', '2030-02-30T00:00:00Z'],
    ['hour 24', '2030-03-01T24:00:00Z'],
    ['a leap second', '2030-06-30T23:59:60Z'],
    ['a date without time', '2030-03-01'],
    ['surrounding text', ' 2030-03-01T12:00:00Z'],
    ['epoch seconds', '1900000000'],
  ])('rejects %s', (_name, text) => {
    expect(parseUtcTimestamp(text)).toBeUndefined();
  });
});

describe('formatUtcTimestamp', () => {
  it('writes whole seconds in UTC, which parseUtcTimestamp reads back', () => {
    const text = formatUtcTimestamp(new Date('2030-03-01T12:00:00.999Z'));
    expect(text).toBe('2030-03-01T12:00:00Z');
    expect(parseUtcTimestamp(text)?.toISOString()).toBe('2030-03-01T12:00:00.000Z');
  });
});
