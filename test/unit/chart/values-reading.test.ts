import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { toolPath } from '../../../dev/lib/tools.ts';
import { parseValues } from '../../../src/validation/parse-values.ts';
import { type HelmBinary, helmBinaries } from './chart-fixtures.ts';

/**
 * The values reader against the helm binaries themselves: a values file of generated plain
 * scalars, rendered by a scratch chart that prints `toJson .Values`, must read as the same
 * JSON through parseValues (values reach helm as that JSON, so the preflight renders what
 * `helm upgrade -f` would).
 */
const dir = mkdtempSync(join(tmpdir(), 'values-reading-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const chart = join(dir, 'chart');
mkdirSync(join(chart, 'templates'), { recursive: true });
writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: reading\nversion: 0.1.0\n');
writeFileSync(
  join(chart, 'templates', 'values.yaml'),
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: values\ndata:\n  json: {{ toJson .Values | quote }}\n',
);

/** Plain scalars made of what YAML 1.1 numbers, booleans, nulls and dates are made of. */
const scalarLike = fc
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
      'X',
      'b',
      'o',
      'O',
      'a',
      'F',
      'yes',
      'No',
      'on',
      'OFF',
      'y',
      '~',
      'null',
      '-0',
      '2001-12-14',
      '0x',
      '0o',
      '0b',
      '0X',
      '0O',
      '0B',
      'e+',
      'e-',
      'T',
      't',
      ' ',
    ),
    { minLength: 1, maxLength: 10 },
  )
  .map((parts) => parts.join('').trim())
  // Text a plain scalar cannot hold (`v: - x` is a list, `v: a: b` a map) is not a scalar.
  .filter((text) => text !== '' && /^[^-:?\s]|^-[^\s]/.test(text) && !/: |:$| #/.test(text));

async function helmReading(binary: HelmBinary, text: string): Promise<unknown> {
  const values = join(dir, 'values.yaml');
  writeFileSync(values, text);
  const { stdout } = await execa(toolPath(binary), ['template', 'reading', chart, '-f', values]);
  const json = /^ {2}json: (".*")$/m.exec(stdout)?.[1];
  if (json === undefined) throw new Error(`no values in helm's output:\n${stdout}`);
  return JSON.parse(JSON.parse(json) as string);
}

describe('values files read as helm reads them', () => {
  it.each(helmBinaries)(
    '%s: 1,000 generated plain scalars read as the same JSON',
    async (binary) => {
      const scalars = fc.sample(scalarLike, 1000);
      const text = scalars.map((scalar, index) => `k${String(index)}: ${scalar}\n`).join('');
      const parsed = parseValues(text, 'the generated values');
      if (!parsed.ok) throw new Error(parsed.finding.message);
      const ours = JSON.parse(JSON.stringify(parsed.values)) as Record<string, unknown>;
      const theirs = (await helmReading(binary, text)) as Record<string, unknown>;
      const differences = scalars
        .map((scalar, index) => ({
          scalar,
          ours: ours[`k${String(index)}`],
          helm: theirs[`k${String(index)}`],
        }))
        .filter(({ ours: mine, helm }) => JSON.stringify(mine) !== JSON.stringify(helm));
      expect(differences).toEqual([]);
    },
  );

  it.each(helmBinaries)('%s refuses .inf, as parseValues does', async (binary) => {
    await expect(helmReading(binary, 'rate: .inf\n')).rejects.toThrow(/unsupported value/);
    expect(parseValues('rate: .inf\n', 'f').ok).toBe(false);
  });
});
