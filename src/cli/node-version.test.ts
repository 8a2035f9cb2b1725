import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { enginesNode, nodeVersionProblem, takesPortableCompileCache } from './node-version.ts';

const manifest: unknown = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
);

describe('nodeVersionProblem', () => {
  it.each([
    ['accepts the lowest admitted version', '22.19.0', '>=22.19', undefined],
    ['accepts a later minor', '22.20.1', '>=22.19', undefined],
    ['accepts a later major with a lower minor', '24.1.0', '>=22.19', undefined],
    [
      'refuses an older major, naming both versions and the fix',
      '20.20.2',
      '>=22.19',
      'haptic needs Node ≥ 22.19 (found v20.20.2): use .tools/bin/node or put .tools/bin on PATH',
    ],
    [
      'refuses an older minor of the same major',
      '22.18.0',
      '>=22.19',
      'haptic needs Node ≥ 22.19 (found v22.18.0): use .tools/bin/node or put .tools/bin on PATH',
    ],
    [
      'spells a range of a whole major as the major alone',
      '20.0.0',
      '>=22.0.0',
      'haptic needs Node ≥ 22 (found v20.0.0): use .tools/bin/node or put .tools/bin on PATH',
    ],
    [
      'names a range it cannot read and the fix',
      '24.0.0',
      '^22',
      `haptic: package.json's engines.node is "^22", not a ">=major.minor" range; reinstall the haptic package.`,
    ],
  ])('%s', (_, found, range, expected) => {
    expect(nodeVersionProblem(found, range)).toBe(expected);
  });

  it("reads this package's engines.node, which the running Node fits", () => {
    expect(enginesNode(manifest)).toMatch(/^>=\d+\.\d+/);
    expect(nodeVersionProblem(process.versions.node, enginesNode(manifest))).toBeUndefined();
  });

  it.each([
    ['no engines', {}],
    ['engines without node', { engines: {} }],
    ['a non-string node', { engines: { node: 22 } }],
    ['not an object', 'text'],
  ])('reads %s as no range', (_, value) => {
    expect(enginesNode(value)).toBe('');
  });
});

describe('takesPortableCompileCache', () => {
  it('is true from Node 24.12 on, where enableCompileCache takes an options object', () => {
    expect(takesPortableCompileCache('22.19.0')).toBe(false);
    expect(takesPortableCompileCache('24.11.1')).toBe(false);
    expect(takesPortableCompileCache('24.12.0')).toBe(true);
    expect(takesPortableCompileCache('25.0.0')).toBe(true);
  });
});
