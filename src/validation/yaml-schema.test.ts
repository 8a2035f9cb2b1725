import fc from 'fast-check';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { yaml11Schema } from './yaml-schema.ts';

/** How the `yaml` package reads a plain scalar as YAML 1.1 (how helm's output was read before). */
function readByYamlPackage(scalar: string): unknown {
  return (parse(`v: ${scalar}`, { version: '1.1', logLevel: 'silent' }) as { v: unknown }).v;
}

function readByYaml11Schema(scalar: string): unknown {
  return (load(`v: ${scalar}`, { schema: yaml11Schema }) as { v: unknown }).v;
}

/** Plain scalars made of what YAML 1.1 numbers, booleans, nulls and dates are made of. */
const numberLike = fc
  .array(
    fc.constantFrom(
      ...'0123456789'.split(''),
      '0',
      '0',
      '1',
      '-',
      '+',
      '.',
      '_',
      ':',
      'e',
      'E',
      'x',
      'b',
      'o',
      'a',
      'F',
      'inf',
      'Inf',
      'nan',
      'NaN',
      'yes',
      'No',
      'on',
      'OFF',
      '~',
      'null',
      '-0',
      '2001-12-14',
      'T',
      ' ',
    ),
    { minLength: 1, maxLength: 10 },
  )
  .map((parts) => parts.join('').trim())
  // Text a plain scalar cannot hold (`v: - x` is a list, `v: a: b` a map) is not a scalar.
  .filter((text) => text !== '' && /^[^-:?~\s]|^-[^\s]|^~$/.test(text) && !/: |:$/.test(text));

describe('yaml11Schema', () => {
  it('reads every plain scalar as the yaml package reads YAML 1.1', () => {
    fc.assert(
      fc.property(numberLike, (scalar) => {
        const before = readByYamlPackage(scalar);
        // The yaml package's one misreading: a number pattern without a digit (`e0`, `0_`) as NaN.
        const expected = Number.isNaN(before) && !/^\.nan$/i.test(scalar) ? scalar : before;
        expect(readByYaml11Schema(scalar)).toStrictEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['1e+06', 1_000_000],
    ['1e3', 1000],
    ['08', 8],
    ['0440', 0o440],
    ['0x1F', 31],
    ['0b101', 5],
    ['-1_000', -1000],
    ['.5', 0.5],
    ['-.inf', Number.NEGATIVE_INFINITY],
    ['yes', true],
    ['Off', false],
    ['~', null],
    ['"08"', '08'],
    ['1.2.3', '1.2.3'],
  ])('reads %s as %s, as helm and Kubernetes read it', (scalar, value) => {
    expect(readByYaml11Schema(scalar)).toStrictEqual(value);
    expect(readByYamlPackage(scalar)).toStrictEqual(value);
  });

  // Not as helm reads them (yaml-schema.ts says how helm does): the yaml package's reading, kept.
  it.each([
    ['1:30', 90],
    ['1:30.5', 90.5],
    ['0o440', '0o440'],
  ])('reads %s as %s, as the yaml package did', (scalar, value) => {
    expect(readByYaml11Schema(scalar)).toStrictEqual(value);
    expect(readByYamlPackage(scalar)).toStrictEqual(value);
  });

  it('reads .nan as NaN, and a float pattern without a digit as a string', () => {
    expect(readByYaml11Schema('.nan')).toBeNaN();
    expect(readByYaml11Schema('e0')).toBe('e0');
    expect(readByYaml11Schema('.')).toBe('.');
    expect(readByYaml11Schema('0_')).toBe('0_');
    expect(readByYamlPackage('e0')).toBeNaN();
  });
});
