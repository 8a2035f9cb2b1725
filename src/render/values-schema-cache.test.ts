import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartDefaults, chartSchema, valuesOf } from '../../test/unit/validation/material.ts';
import { coalesceValues } from '../validation/values-merge.ts';
import { compileValuesSchema } from '../validation/values-schema.ts';
import { loadValuesSchemaCheck } from './values-schema-cache.ts';

const defaults = chartDefaults();
const invalid: Record<string, unknown>[] = [
  {},
  { 'haproxy.agent.tls.certValidityDay': 30 },
  { controler: {} },
  { 'controller.replicas': 'two' },
  { 'haproxy.agent.tls.certValidityDays': 5000 },
  { 'controller.logLevel': 'loud' },
  { 'controller.resources.requests.cpu': 'lots' },
  { a: 1, 'controller.replicas': 0 },
];

function cacheDir(): string {
  return join(mkdtempSync(join(tmpdir(), 'values-schema-cache-')), 'cache');
}

describe('loadValuesSchemaCheck', () => {
  it('keeps the compiled code, and the kept code finds exactly what ajv at run time finds', () => {
    const dir = cacheDir();
    const compiled = loadValuesSchemaCheck(chartSchema(), dir);
    expect(readdirSync(dir)).toEqual([expect.stringMatching(/^values-schema-[0-9a-f]{32}\.cjs$/)]);
    const kept = loadValuesSchemaCheck(chartSchema(), dir);
    const reference = compileValuesSchema(chartSchema());
    for (const flat of invalid) {
      const values = coalesceValues(valuesOf(flat), defaults);
      expect(kept(values)).toEqual(reference(values));
      expect(compiled(values)).toEqual(reference(values));
    }
  });

  it('names the files it requires relative to the directory, so the kept file moves with the installation', () => {
    const dir = cacheDir();
    loadValuesSchemaCheck(chartSchema(), dir);
    const [name = ''] = readdirSync(dir);
    const code = readFileSync(join(dir, name), 'utf8');
    const required = [...code.matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]);
    expect(required.length).toBeGreaterThan(0);
    for (const path of required)
      expect(path).toMatch(/^\.\.\/.*\/ajv\/dist\/runtime\/[a-z0-9]+\.js$/);
  });

  it('loads the kept validator instead of compiling', () => {
    const dir = cacheDir();
    loadValuesSchemaCheck(chartSchema(), dir);
    const [name = ''] = readdirSync(dir);
    writeFileSync(
      join(dir, name),
      "module.exports = function v() { v.errors = [{ keyword: 'required', instancePath: '', schemaPath: '#/required', params: { missingProperty: 'kept' } }]; return false; };",
    );
    const check = loadValuesSchemaCheck(chartSchema(), dir);
    expect(check({}).map((f) => f.message)).toEqual(['kept is required; set it.']);
  });

  it('keeps one file per schema, so a changed schema is compiled anew', () => {
    const dir = cacheDir();
    loadValuesSchemaCheck(chartSchema(), dir);
    const changed = { ...chartSchema(), description: 'changed' };
    loadValuesSchemaCheck(changed, dir);
    expect(readdirSync(dir)).toHaveLength(2);
  });

  it('compiles every time where the directory cannot be written', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'values-schema-cache-')), 'file');
    writeFileSync(file, '');
    const dir = join(file, 'cache');
    const check = loadValuesSchemaCheck(chartSchema(), dir);
    expect(existsSync(dir)).toBe(false);
    expect(check(coalesceValues(valuesOf({ controler: {} }), defaults))).toHaveLength(1);
  });

  it('compiles without a directory (the compile cache is off under vitest)', () => {
    const check = loadValuesSchemaCheck(chartSchema());
    expect(check(coalesceValues(valuesOf({}), defaults))).toEqual([]);
  });
});
