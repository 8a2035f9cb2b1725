import { describe, expect, it } from 'vitest';
import { parseValues } from './parse-values.ts';

describe('parseValues', () => {
  it('reads YAML 1.1 like helm (yes is a boolean)', () => {
    expect(parseValues('a:\n  b: yes\n', 'f')).toEqual({ ok: true, values: { a: { b: true } } });
  });

  it('reads an empty file as no values', () => {
    expect(parseValues('', 'f')).toEqual({ ok: true, values: {} });
  });

  it.each([
    ['broken YAML', 'a: [\n', /^values file x is not valid YAML \(.+\); fix the syntax\.$/],
    ['a list', '- a\n', /^values file x must be a YAML map of values, not a list\.$/],
    ['duplicate keys', 'a: 1\na: 2\n', /^values file x is not valid YAML/],
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
