import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { readGoYamlNumber, yaml11Schema } from './yaml-schema.ts';

/** A plain scalar as the schema reads it, as JSON (what values become on their way to helm). */
function readAsJson(scalar: string): unknown {
  const { v } = load(`v: ${scalar}`, { schema: yaml11Schema }) as { v: unknown };
  return JSON.parse(JSON.stringify(v));
}

/**
 * Scalars and what helm 3.22 made of them as a values file (`toJson .Values` of a scratch
 * chart); test/unit/chart/values-reading.test.ts asks the helm binary itself for many more.
 */
const helmReadings: readonly (readonly [string, unknown])[] = [
  ['2001-12-14t21:59:43.10-05:00', '2001-12-14t21:59:43.10-05:00'],
  ['2001-12-14 21:59:43.10', '2001-12-14 21:59:43.10'],
  ['2001-13-14', '2001-13-14'],
  ['2001-1-2', '2001-1-2'],
  ['1_000', 1000],
  ['+12', 12],
  ['-0b101', -5],
  ['0b', '0b'],
  // 64 bits: ParseInt's range with a sign, ParseUint's without; an octal beyond is decimal.
  ['0xFFFFFFFFFFFFFFFF', 18446744073709552000],
  ['0x10000000000000000', '0x10000000000000000'],
  ['-0x8000000000000000', -9223372036854776000],
  ['-0x8000000000000001', '-0x8000000000000001'],
  ['+0x8000000000000000', '+0x8000000000000000'],
  ['+0x7FFFFFFFFFFFFFFF', 9223372036854776000],
  ['0x8000000000000000', 9223372036854776000],
  [`0b+1${'0'.repeat(63)}`, `0b+1${'0'.repeat(63)}`],
  [`0b-1${'0'.repeat(63)}`, -9223372036854776000],
  ['-01000000000000000000000', -9223372036854776000],
  ['-01000000000000000000001', -1e21],
  ['02000000000000000000000', 2e21],
  ['01777777777777777777777', 18446744073709552000],
  ['0b-101', -5],
  ['0b+1_1', 3],
  ['0b-0', 0],
  ['0B-1', '0B-1'],
  ['-0b-1', '-0b-1'],
  ['0b-', '0b-'],
  ['0x', '0x'],
  ['0o', '0o'],
  ['00', 0],
  ['-0', 0],
  ['1__0', 10],
  ['_1', '_1'],
  ['1_', 1],
  ['0x_1F', 31],
  ['0b_1', 1],
  ['09.5', 9.5],
  ['1e5', 100000],
  ['1E5', 100000],
  ['1e+5', 100000],
  ['1.5e5', 150000],
  ['12345678901234567890', 12345678901234567000],
  ['-9223372036854775809', -9223372036854776000],
  ['18446744073709551616', 18446744073709552000],
  ['.5e400', '.5e400'],
  ['1e400', '1e400'],
  ['0.', 0],
  ['1.', 1],
  ['+.5', 0.5],
  ['0O17', 15],
  ['0B101', 5],
  ['08', 8],
  ['0_', 0],
  ['._5', '._5'],
  ['._', '._'],
  ['1:30', '1:30'],
  ['-1:30', '-1:30'],
  ['1:30.5', '1:30.5'],
  ['+0x1F', 31],
  ['-0x1F', -31],
  ['0x1f', 31],
  ['1e', '1e'],
  ['1e+', '1e+'],
  ['-.5', -0.5],
  ['.5', 0.5],
  ['.5E3', 500],
  ['+1_0.5', 10.5],
  ['1.5_5', 1.55],
  ['0.0.1', '0.0.1'],
  ['1-2', '1-2'],
  ['0e0', 0],
  ['-0e-0', 0],
  ['1_e5', 100000],
  ['.5_', '.5_'],
  ['yes', true],
  ['Off', false],
  ['y', true],
  ['~', null],
  ['Null', null],
  ['1e+06', 1_000_000],
  ['0440', 288],
  ['"08"', '08'],
  ['.4_3', 0.43],
  ['.5e1_0', 5_000_000_000],
  ['._5e1', '._5e1'],
  ['.5e_1', '.5e_1'],
  ['.5e-400', 0],
];

describe('yaml11Schema', () => {
  it.each(helmReadings)('reads %s as helm does: %j', (scalar, value) => {
    expect(readAsJson(scalar)).toEqual(value);
  });

  it('reads .inf and .nan as numbers JSON cannot hold (the values check refuses them, as helm does)', () => {
    expect(readGoYamlNumber('.inf')).toBe(Number.POSITIVE_INFINITY);
    expect(readGoYamlNumber('-.Inf')).toBe(Number.NEGATIVE_INFINITY);
    expect(readGoYamlNumber('.NaN')).toBeNaN();
  });

  it('keeps an explicit !!timestamp as its text', () => {
    expect(readAsJson('!!timestamp 2001-12-14')).toBe('2001-12-14');
  });
});
