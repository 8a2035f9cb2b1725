import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { chartDir } from './chart-fixtures.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface SchemaNode {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly default?: Json;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: boolean | SchemaNode;
  readonly $ref?: string;
}

const schema = JSON.parse(
  readFileSync(join(chartDir, 'values.schema.json'), 'utf8'),
) as SchemaNode & Readonly<Record<string, unknown>>;
const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'), { version: '1.1' }) as {
  [key: string]: Json;
};

function isMap(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every node of the schema's own structure, with its path (not the shared definitions). */
function structuralNodes(node: SchemaNode, path: string): [string, SchemaNode][] {
  const children = Object.entries(node.properties ?? {}).flatMap(([key, child]) =>
    structuralNodes(child, path === '' ? key : `${path}.${key}`),
  );
  return [[path, node], ...children];
}

const nodes = structuralNodes(schema, '');

describe('values.schema.json', () => {
  it('compiles with ajv (draft-07) and accepts values.yaml', () => {
    const ajv = new Ajv({ strict: true, allErrors: true });
    const validate = ajv.compile(schema);
    expect(validate(values), JSON.stringify(validate.errors)).toBe(true);
  });

  it('rejects unknown keys in every object of its own structure', () => {
    const open = nodes.filter(
      ([, node]) => node.properties !== undefined && node.additionalProperties !== false,
    );
    expect(open.map(([path]) => path)).toEqual([]);
  });

  it('describes every key', () => {
    const undescribed = nodes.filter(([path, node]) => path !== '' && !node.description);
    expect(undescribed.map(([path]) => path)).toEqual([]);
  });

  it('has exactly the keys of values.yaml', () => {
    const valueKeys = (value: Json, path: string): string[] =>
      isMap(value) && (path === '' || nodes.some(([p, n]) => p === path && n.properties))
        ? Object.entries(value).flatMap(([key, child]) => {
            const childPath = path === '' ? key : `${path}.${key}`;
            return [childPath, ...valueKeys(child, childPath)];
          })
        : [];
    const schemaKeys = nodes.map(([path]) => path).filter((path) => path !== '');
    expect(valueKeys(values, '').sort()).toEqual(schemaKeys.sort());
  });

  it('gives each leaf key the default values.yaml sets', () => {
    const leaves = nodes.filter(([, node]) => node.properties === undefined);
    const valueAt = (path: string): Json | undefined =>
      path.split('.').reduce<Json | undefined>((v, key) => (isMap(v) ? v[key] : undefined), values);
    const mismatches = leaves
      .filter(([path, node]) => JSON.stringify(node.default) !== JSON.stringify(valueAt(path)))
      .map(([path, node]) => ({ path, schema: node.default, values: valueAt(path) }));
    expect(mismatches).toEqual([]);
    expect(leaves.filter(([, node]) => !('default' in node)).map(([path]) => path)).toEqual([]);
  });
});
