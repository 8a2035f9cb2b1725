import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  publishedLocations,
  publishedSchema,
  publishedValues,
  registryProblem,
} from '../../../dev/publish/published-chart.ts';
import { toolPath } from '../../../dev/lib/tools.ts';
import { renderChart } from '../../../src/render/index.ts';
import { chartDir } from '../chart/chart-fixtures.ts';

const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;
const repository = 'registry.example.com/team/haptic';
const valuesYaml = readFileSync(join(chartDir, 'values.yaml'), 'utf8');
const schemaJson = readFileSync(join(chartDir, 'values.schema.json'), 'utf8');

describe('make publish’s registry argument', () => {
  it.each([
    'registry.example.com',
    'registry.example.com/team',
    '127.0.0.1:5000',
    'r:443/a/b-c/d_e',
  ])('accepts %s', (registry) => {
    expect(registryProblem(registry)).toBeUndefined();
  });

  it.each([
    ['', 'REGISTRY is empty'],
    ['https://registry.example.com', 'has a scheme'],
    ['oci://registry.example.com', 'has a scheme'],
    ['registry.example.com/team/', 'is not host[:port][/path]'],
    ['Registry.example.com', 'is not host[:port][/path]'],
    ['registry.example.com/te am', 'is not host[:port][/path]'],
    ['registry.example.com/team;rm -rf /', 'is not host[:port][/path]'],
  ])('refuses %j with the reason and an example', (registry, reason) => {
    const problem = registryProblem(registry) ?? '';
    expect(problem).toContain(reason);
    expect(problem).toContain('registry.example.com/team');
  });

  it('names the image and chart locations under the registry', () => {
    expect(publishedLocations('registry.example.com/team')).toEqual({
      imageRepository: 'registry.example.com/team/haptic',
      chartRepository: 'oci://registry.example.com/team/charts',
      chartReference: 'oci://registry.example.com/team/charts/haptic',
    });
  });
});

describe('the published chart', () => {
  it('changes image.repository and image.digest of values.yaml and nothing else, comments kept', () => {
    const published = publishedValues(valuesYaml, repository, digest);
    const before = parse(valuesYaml) as { image: Record<string, unknown> };
    const after = parse(published) as { image: Record<string, unknown> };
    expect(after).toEqual({ ...before, image: { ...before.image, repository, digest } });
    const changed = published.split('\n').filter((line, i) => line !== valuesYaml.split('\n')[i]);
    expect(changed).toEqual([`  repository: ${repository}`, `  digest: '${digest}'`]);
  });

  it('refuses a digest that is not sha256 and values without an image map', () => {
    expect(() => publishedValues(valuesYaml, repository, 'sha256:abc')).toThrow(
      "The pushed image's digest 'sha256:abc' is not sha256:<64 hex digits>.",
    );
    expect(() => publishedValues('nameOverride: x\n', repository, digest)).toThrow(
      'values.yaml has no image map',
    );
  });

  it('documents the same defaults in values.schema.json', () => {
    const schema = JSON.parse(publishedSchema(schemaJson, repository, digest)) as {
      properties: { image: { properties: Record<string, { default: unknown }> } };
    };
    expect(schema.properties.image.properties.repository?.default).toBe(repository);
    expect(schema.properties.image.properties.digest?.default).toBe(digest);
  });

  it('renders every haptic container, hooks included, with the pushed image pinned by digest', async () => {
    const chart = join(mkdtempSync(join(tmpdir(), 'published-chart-')), 'haptic');
    cpSync(chartDir, chart, { recursive: true });
    writeFileSync(join(chart, 'values.yaml'), publishedValues(valuesYaml, repository, digest));
    writeFileSync(
      join(chart, 'values.schema.json'),
      publishedSchema(schemaJson, repository, digest),
    );
    const { objects } = await renderChart({
      chartDir: chart,
      helmBin: toolPath('helm'),
      values: {},
    });
    const images = new Set(
      Array.from(JSON.stringify(objects).matchAll(/"image":"([^"]+)"/g), (match) => match[1]),
    );
    expect([...images]).toEqual([`${repository}@${digest}`]);
  });
});
