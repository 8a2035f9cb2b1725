import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { embeddedChartDir } from './chart-dir.ts';
import { readChartYaml } from './chart-yaml.ts';

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'chart-yaml-'));
}

function yamlFile(dir: string, text: string): string {
  const path = join(dir, 'values.yaml');
  writeFileSync(path, text);
  return path;
}

describe('readChartYaml', () => {
  it("keeps the embedded chart's parse, and the kept value equals the YAML 1.1 parse", () => {
    const cache = join(scratch(), 'cache');
    for (const name of ['Chart.yaml', 'values.yaml']) {
      const path = join(embeddedChartDir(), name);
      const reference: unknown = parse(readFileSync(path, 'utf8'), { version: '1.1' });
      expect(readChartYaml(path, cache)).toEqual(reference);
      expect(readChartYaml(path, cache)).toEqual(reference);
    }
    const kept = readdirSync(cache);
    expect(kept).toHaveLength(2);
    for (const name of kept) expect(name).toMatch(/^chart-yaml-[0-9a-f]{32}\.json$/);
  });

  it('reads YAML 1.1 as helm does, with or without a cache', () => {
    const path = yamlFile(scratch(), 'mode: 0440\nenabled: yes\n');
    expect(readChartYaml(path, undefined)).toEqual({ mode: 288, enabled: true });
    const cache = join(scratch(), 'cache');
    readChartYaml(path, cache);
    expect(readChartYaml(path, cache)).toEqual({ mode: 288, enabled: true });
  });

  it('reads the kept parse instead of parsing', () => {
    const dir = scratch();
    const cache = join(dir, 'cache');
    const path = yamlFile(dir, 'a: 1\n');
    readChartYaml(path, cache);
    const [name = ''] = readdirSync(cache);
    writeFileSync(join(cache, name), '{"a":"kept"}');
    expect(readChartYaml(path, cache)).toEqual({ a: 'kept' });
  });

  it('never reads a stale parse: a changed file is parsed anew', () => {
    const dir = scratch();
    const cache = join(dir, 'cache');
    const path = yamlFile(dir, 'a: 1\n');
    expect(readChartYaml(path, cache)).toEqual({ a: 1 });
    writeFileSync(path, 'a: 2\n');
    expect(readChartYaml(path, cache)).toEqual({ a: 2 });
    expect(readdirSync(cache)).toHaveLength(2);
  });

  it('parses again when the kept file is damaged', () => {
    const dir = scratch();
    const cache = join(dir, 'cache');
    const path = yamlFile(dir, 'a: 1\n');
    readChartYaml(path, cache);
    const [name = ''] = readdirSync(cache);
    writeFileSync(join(cache, name), '{"a":');
    expect(readChartYaml(path, cache)).toEqual({ a: 1 });
  });

  it('does not keep a parse JSON cannot carry unchanged', () => {
    const dir = scratch();
    const cache = join(dir, 'cache');
    const path = yamlFile(dir, 'limit: .inf\n');
    expect(readChartYaml(path, cache)).toEqual({ limit: Infinity });
    expect(existsSync(cache) ? readdirSync(cache) : []).toEqual([]);
    expect(readChartYaml(path, cache)).toEqual({ limit: Infinity });
  });

  it('parses every time where the directory cannot be written', () => {
    const dir = scratch();
    const blocker = join(dir, 'file');
    writeFileSync(blocker, '');
    const path = yamlFile(dir, 'a: 1\n');
    expect(readChartYaml(path, join(blocker, 'cache'))).toEqual({ a: 1 });
    expect(existsSync(join(blocker, 'cache'))).toBe(false);
  });

  it('throws what reading or parsing throws', () => {
    const dir = scratch();
    expect(() => readChartYaml(join(dir, 'missing.yaml'), join(dir, 'cache'))).toThrow(/ENOENT/);
    const path = yamlFile(dir, 'a: [1\n');
    expect(() => readChartYaml(path, join(dir, 'cache'))).toThrow();
  });
});
