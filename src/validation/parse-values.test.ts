import { describe, expect, it } from 'vitest';
import { parseValues } from './parse-values.ts';

describe('parseValues', () => {
  it('reads YAML 1.1 like helm (yes is a boolean)', () => {
    expect(parseValues('a:\n  b: yes\n', 'f')).toEqual({ ok: true, values: { a: { b: true } } });
  });

  it('reads an empty file as no values', () => {
    expect(parseValues('', 'f')).toEqual({ ok: true, values: {} });
    expect(parseValues('# nothing yet\n', 'f')).toEqual({ ok: true, values: {} });
  });

  it('reads numbers as helm does (Go prints large ones as 1e+06) and follows aliases and merges', () => {
    expect(parseValues('big: 1e+06\nmode: 0440\nd: &d {a: 1}\ne: {<<: *d, b: 2}\n', 'f')).toEqual({
      ok: true,
      values: { big: 1_000_000, mode: 0o440, d: { a: 1 }, e: { a: 1, b: 2 } },
    });
  });

  // Ten lists of ten aliases of the list before: 10^10 entries once written out, in 300 bytes.
  const aliasBomb = [
    'a0: &a0 [x, x, x, x, x, x, x, x, x, x]',
    ...Array.from(
      { length: 9 },
      (_, level) => `a${level + 1}: &a${level + 1} [${Array(10).fill(`*a${level}`).join(', ')}]`,
    ),
  ].join('\n');

  // Fifty anchors, each 50 levels deep around the one before: 2,500 levels written out.
  const deepChain = Array.from({ length: 50 }, (_, level) => {
    const inner = level === 0 ? '1' : `*d${level - 1}`;
    return `d${level}: &d${level} ${'{a: '.repeat(50)}${inner}${'}'.repeat(50)}`;
  }).join('\n');

  it('reads many aliases of a few anchors, as helm does', () => {
    const anchors = 'r1: &r1 {cpu: 1}\nr2: &r2 {cpu: 2}\nr3: &r3 {cpu: 3}\n';
    const uses = Array.from({ length: 180 }, (_, i) => `c${i}: {resources: *r${(i % 3) + 1}}`);
    const parsed = parseValues(`${anchors}${uses.join('\n')}\n`, 'f');
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.values.c179).toEqual({ resources: { cpu: 3 } });
  });

  it.each([
    ['broken YAML', 'a: [\n', /^values file x is not valid YAML \(.+\); fix the syntax\.$/],
    ['a list', '- a\n', /^values file x must be a YAML map of values, not a list\.$/],
    ['duplicate keys', 'a: 1\na: 2\n', /^values file x is not valid YAML/],
    [
      'two documents',
      'a: 1\n---\nb: 2\n',
      /^values file x holds 2 YAML documents; values are one map, so remove the --- separators\.$/,
    ],
    [
      'aliases that expand to more than a million entries',
      aliasBomb,
      /^values file x would hold more than 1000000 entries or nest deeper than 100 levels once its aliases are written out; write the values with fewer nested aliases\.$/,
    ],
    [
      'aliases that nest deeper than 100 levels',
      deepChain,
      /^values file x would hold more than 1000000 entries or nest deeper than 100 levels once its aliases are written out/,
    ],
    [
      '.inf, which helm refuses',
      'limits:\n  rate: .inf\n',
      /^values file x holds \.inf or \.nan, which helm refuses \(values become JSON, which has no such numbers\); write a number, or quote the text\.$/,
    ],
    ['.nan in a list', 'a: [1, .NaN]\n', /^values file x holds \.inf or \.nan, which helm refuses/],
    [
      'an alias inside the value it names',
      'x: &a {y: *a}\n',
      /^values file x has an alias inside the value it names \(a value that contains itself\), which helm refuses too; remove that alias\.$/,
    ],
    [
      'an alias inside the list it names',
      'x: &a [1, *a]\n',
      /^values file x has an alias inside the value it names/,
    ],
  ])('rejects %s with a ValuesUnparsable finding', (_, text, message) => {
    const parsed = parseValues(text, 'values file x');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.finding).toMatchObject({
        code: 'ValuesUnparsable',
        severity: 'error',
        path: 'values file x',
      });
      expect(parsed.finding.message).toMatch(message);
    }
  });
});
