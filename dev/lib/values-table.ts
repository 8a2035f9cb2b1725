/**
 * The configuration reference of docs/configuration.md: one row per chart value (path, type,
 * default, description), read from chart/values.schema.json, with the default from
 * chart/values.yaml where the schema gives none. The table sits between two marker comments;
 * the page around it is written by hand. `node dev/values-table.ts` writes it, and
 * test/unit/docs/values-table.test.ts fails when the page is out of step with the schema.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { format, resolveConfig } from 'prettier';
import { projectRoot } from './tools.ts';

/** The page that holds the table, relative to the project root. */
export const configurationPage = 'docs/configuration.md';

/** The command that rewrites the table. */
export const valuesTableCommand = 'node dev/values-table.ts';

const startMarker = `<!-- values-table:start (generated from chart/values.schema.json by ${valuesTableCommand}; do not edit) -->`;
const endMarker = '<!-- values-table:end -->';

interface SchemaNode {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly items?: SchemaNode;
  readonly anyOf?: readonly SchemaNode[];
  readonly oneOf?: readonly SchemaNode[];
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly definitions?: Readonly<Record<string, SchemaNode>>;
  readonly $ref?: string;
}

/** One row of the table. */
interface ValueRow {
  /** The top-level key of a nested value; undefined for a top-level value. */
  readonly group: string | undefined;
  readonly path: string;
  readonly type: string;
  readonly defaultValue: string;
  readonly description: string;
}

/** The definition a `#/definitions/<name>` reference names, or the node itself. */
function resolved(node: SchemaNode, root: SchemaNode): SchemaNode {
  const name = node.$ref?.replace('#/definitions/', '');
  const target = name === undefined ? undefined : root.definitions?.[name];
  if (node.$ref !== undefined && target === undefined) {
    throw new Error(`values.schema.json: ${node.$ref} names no definition`);
  }
  return { ...target, ...node };
}

function inlineCode(text: string): string {
  return `\`${text}\``;
}

/**
 * The type column: the JSON type, an enum's values, an integer's range, an array's items, or
 * the alternatives of an `anyOf`/`oneOf`.
 */
function typeOf(node: SchemaNode, root: SchemaNode): string {
  const full = resolved(node, root);
  const alternatives = full.anyOf ?? full.oneOf;
  if (alternatives !== undefined) {
    return [...new Set(alternatives.map((alternative) => typeOf(alternative, root)))].join(' or ');
  }
  if (full.enum !== undefined) {
    return `one of ${full.enum.map((value) => inlineCode(JSON.stringify(value))).join(', ')}`;
  }
  const types = full.type === undefined ? ['any'] : [full.type].flat();
  const named = types.map((type) =>
    type === 'array' && full.items !== undefined ? `${typeOf(full.items, root)}[]` : type,
  );
  const range =
    full.minimum !== undefined && full.maximum !== undefined
      ? ` ${full.minimum}–${full.maximum}`
      : full.minimum !== undefined
        ? ` ≥ ${full.minimum}`
        : '';
  return `${named.join(' or ')}${range}`;
}

/** The value at a dotted path of values.yaml, if any. */
function valueAt(values: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>(
    (value, key) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)[key]
        : undefined,
    values,
  );
}

/** Text for a table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s+/g, ' ').trim().replaceAll('|', '\\|');
}

/** Prose for a table cell: outside code spans, `<` starts no HTML tag and `*` no emphasis. */
function proseCell(text: string): string {
  return cell(text)
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part : part.replace(/[<*]/g, '\\$&')))
    .join('');
}

/** Every leaf value of the schema, in the schema's order. */
function valueRows(
  node: SchemaNode,
  path: readonly string[],
  root: SchemaNode,
  values: unknown,
): ValueRow[] {
  if (node.properties !== undefined) {
    return Object.entries(node.properties).flatMap(([key, child]) =>
      valueRows(child, [...path, key], root, values),
    );
  }
  const full = resolved(node, root);
  const fallback = valueAt(values, path);
  const defaultValue = 'default' in node ? node.default : fallback;
  return [
    {
      group: path.length > 1 ? path[0] : undefined,
      path: inlineCode(path.join('.')),
      type: cell(typeOf(node, root)),
      defaultValue:
        defaultValue === undefined ? '' : inlineCode(cell(JSON.stringify(defaultValue))),
      description: proseCell(full.description ?? ''),
    },
  ];
}

/** A table in Markdown (prettier aligns it when the page is formatted). */
function markdownTable(rows: readonly ValueRow[]): string {
  return [
    '| value | type | default | description |',
    '| --- | --- | --- | --- |',
    ...rows.map(
      (row) => `| ${row.path} | ${row.type} | ${row.defaultValue} | ${row.description} |`,
    ),
  ].join('\n');
}

/**
 * The reference: the top-level values first, then one table per top-level group (`image`,
 * `controller`, …) under a heading of its own, in the schema's order.
 */
function valuesTable(schema: SchemaNode, values: unknown): string {
  const rows = valueRows(schema, [], schema, values);
  const groups = new Map<string, ValueRow[]>();
  for (const row of rows) {
    const group = row.group ?? '';
    groups.set(group, [...(groups.get(group) ?? []), row]);
  }
  return [...groups]
    .sort(([a], [b]) => Number(a !== '') - Number(b !== ''))
    .map(([group, members]) =>
      group === ''
        ? markdownTable(members)
        : `### ${inlineCode(group)}\n\n${markdownTable(members)}`,
    )
    .join('\n\n');
}

/** The page with the table between its markers replaced, formatted as prettier writes it. */
async function withTable(page: string, table: string, file: string): Promise<string> {
  const start = page.indexOf(startMarker);
  const end = page.indexOf(endMarker);
  if (start < 0 || end < start) {
    throw new Error(`${configurationPage} lacks the markers ${startMarker} … ${endMarker}`);
  }
  const text = `${page.slice(0, start + startMarker.length)}\n\n${table}\n\n${page.slice(end)}`;
  const options = (await resolveConfig(file)) ?? {};
  return format(text, { ...options, filepath: file });
}

/** docs/configuration.md as it is, and as it should be with the schema's current table. */
export async function configurationReference(): Promise<{
  readonly file: string;
  readonly current: string;
  readonly expected: string;
}> {
  const chart = join(projectRoot, 'chart');
  const schema = JSON.parse(readFileSync(join(chart, 'values.schema.json'), 'utf8')) as SchemaNode;
  const values = load(readFileSync(join(chart, 'values.yaml'), 'utf8'));
  const file = join(projectRoot, configurationPage);
  const current = readFileSync(file, 'utf8');
  return { file, current, expected: await withTable(current, valuesTable(schema, values), file) };
}
