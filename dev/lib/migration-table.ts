/**
 * The annotation table of docs/ingress-migration.md: one row per ingress-nginx annotation (name,
 * status, what happens here or what to do instead), from src/annotations/nginx-annotations.ts,
 * whose statuses and notes come from the annotation catalog where it knows the name. The table
 * sits between two marker comments; the page around it is written by hand.
 * `node dev/migration-table.ts` writes it, and test/unit/docs/migration-table.test.ts fails
 * when the page is out of step with the catalog.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import {
  type MigrationStatus,
  type NginxAnnotation,
  nginxAnnotations,
  nginxTableProblems,
} from '../../src/annotations/nginx-annotations.ts';
import { projectRoot } from './tools.ts';

/** The page that holds the table, relative to the project root. */
export const migrationPage = 'docs/ingress-migration.md';

/** The command that rewrites the table. */
export const migrationTableCommand = 'node dev/migration-table.ts';

const startMarker = `<!-- migration-table:start (generated from src/annotations by ${migrationTableCommand}; do not edit) -->`;
const endMarker = '<!-- migration-table:end -->';

/** The status column, as `haptic ingress lint` words its verdicts. */
const statusWords: Readonly<Record<MigrationStatus, string>> = {
  supported: 'served',
  differently: 'served differently',
  refused: '**refused**',
  unsupported: 'ignored',
};

/** Prose for a table cell: one line, pipes escaped, `<` and `*` outside code taken literally. */
function proseCell(text: string): string {
  return text.replace(/\s+/g, ' ').trim().replaceAll('|', '\\|').replace(/[<*_]/g, '\\$&');
}

/** Names that share a status and a note, in the order of the first. */
interface Group {
  readonly names: string[];
  readonly status: MigrationStatus;
  readonly note: string;
}

/** The entries grouped: one row for the names sharing a status and a note (auth-*, canary-*). */
function grouped(entries: readonly NginxAnnotation[]): Group[] {
  const groups = new Map<string, Group>();
  for (const { name, status, note } of entries) {
    const key = `${status}\n${note}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { names: [name], status, note });
    else group.names.push(name);
  }
  return [...groups.values()];
}

function row(group: Group): string {
  const names = group.names.map((name) => `\`${name}\``).join(', ');
  return `| ${names} | ${statusWords[group.status]} | ${proseCell(group.note)} |`;
}

/**
 * The table in Markdown, one row per group of names sharing a status and a note (prettier
 * aligns it when the page is formatted).
 */
export function migrationTable(entries: readonly NginxAnnotation[]): string {
  return [
    '| annotation (`nginx.ingress.kubernetes.io/…`) | here | what happens, or what to do instead |',
    '| --- | --- | --- |',
    ...grouped(entries).map(row),
  ].join('\n');
}

/** The page with the table between its markers replaced, formatted as prettier writes it. */
async function withTable(page: string, table: string, file: string): Promise<string> {
  const start = page.indexOf(startMarker);
  const end = page.indexOf(endMarker);
  if (start < 0 || end < start) {
    throw new Error(`${migrationPage} lacks the markers ${startMarker} … ${endMarker}`);
  }
  const text = `${page.slice(0, start + startMarker.length)}\n\n${table}\n\n${page.slice(end)}`;
  const options = (await resolveConfig(file)) ?? {};
  return format(text, { ...options, filepath: file });
}

/**
 * docs/ingress-migration.md as it is, and as it should be with the current table. Throws when
 * the table itself is not whole (a name without a note), naming each gap.
 */
export async function migrationReference(): Promise<{
  readonly file: string;
  readonly current: string;
  readonly expected: string;
}> {
  const problems = nginxTableProblems();
  if (problems.length > 0) {
    throw new Error(
      `src/annotations/nginx-annotations.ts is out of step with the catalog:\n${problems.join('\n')}`,
    );
  }
  const file = join(projectRoot, migrationPage);
  const current = readFileSync(file, 'utf8');
  return {
    file,
    current,
    expected: await withTable(current, migrationTable(nginxAnnotations), file),
  };
}
