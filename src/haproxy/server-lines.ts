/**
 * Reading the lines a runtime change touches: `server <name> <ip>:<port> … [disabled]` slot
 * lines, the first word of a line as HAProxy reads it, and the `backend`/`listen` section a
 * line belongs to. Shared by the runtime plan (runtime-changes.ts) and the slot rewrite
 * (slot-rewrite.ts). Pure.
 */
import { isIP } from 'node:net';
import { runtimeNamePattern } from '../agent-api/api-types.ts';
import { type ConfigWord, splitConfigLine } from './config-words.ts';
import { otherSections, sectionKinds } from './keywords.ts';

export const sectionKeywords: ReadonlySet<string> = new Set([
  ...Object.keys(sectionKinds),
  ...otherSections,
]);

export function literal(word: ConfigWord | undefined): string | undefined {
  return word !== undefined && word.references.length === 0 ? word.text : undefined;
}

/** `10.0.0.1:80` or `[fd00::1]:80` → address and port; anything else is not a slot address. */
export function parseServerAddress(
  text: string,
): { readonly address: string; readonly port: number } | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([0-9.]+)):([0-9]{1,5})$/.exec(text);
  if (match === null) return undefined;
  const address = match[1] ?? match[2] ?? '';
  const family = isIP(address);
  if ((match[1] !== undefined && family !== 6) || (match[2] !== undefined && family !== 4)) {
    return undefined;
  }
  const port = Number(match[3]);
  return port >= 1 && port <= 65535 ? { address, port } : undefined;
}

export interface ServerLine {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly disabled: boolean;
  /** The settings between the address and the trailing `disabled`. */
  readonly settings: readonly string[];
}

export function serverLine(text: string): ServerLine | undefined {
  const line = splitConfigLine(text);
  if (line.error !== undefined || line.scope) return undefined;
  const words = line.words.map(literal);
  if (words.some((word) => word === undefined)) return undefined;
  const [keyword, name, endpoint, ...rest] = words as string[];
  if (keyword !== 'server' || name === undefined || !runtimeNamePattern.test(name))
    return undefined;
  const parsed = endpoint === undefined ? undefined : parseServerAddress(endpoint);
  if (parsed === undefined) return undefined;
  const disabled = rest.at(-1) === 'disabled';
  return { name, ...parsed, disabled, settings: disabled ? rest.slice(0, -1) : rest };
}

function isSpace(code: number): boolean {
  return (
    code === 32 || (code >= 9 && code <= 13) || (code > 127 && /\s/.test(String.fromCharCode(code)))
  );
}

function isKeywordCharacter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 45;
}

/** A first word whose text HAProxy only knows when it reads it (an environment reference). */
export const unreadable = Symbol('unreadable');

/**
 * The first word of a line as HAProxy reads it: undefined for a blank, comment or scope line,
 * `unreadable` when its text is not in the line or the line cannot be read. A plain keyword
 * (`^\s*([A-Za-z-]+)(?:\s|$)`) is scanned without splitting the line: at a thousand backends
 * this runs for every line of every runtime change. Anything else is split as HAProxy splits
 * it, so a quoted or escaped keyword (`"backend" b`, `\x62ackend b`) is the keyword it reads.
 */
export function firstWord(line: string): string | typeof unreadable | undefined {
  let end = 0;
  while (end < line.length && isSpace(line.charCodeAt(end))) end += 1;
  const start = end;
  while (end < line.length && isKeywordCharacter(line.charCodeAt(end))) end += 1;
  if (end > start && (end === line.length || isSpace(line.charCodeAt(end)))) {
    return line.slice(start, end);
  }
  if (start === line.length || line.charAt(start) === '#') return undefined;
  const split = splitConfigLine(line);
  if (split.error !== undefined) return unreadable;
  const [word] = split.words;
  if (word === undefined) return undefined;
  return literal(word) ?? unreadable;
}

/** The `backend`/`listen` name of the section line `index` is in, or why there is none. */
export function proxyOf(
  lines: readonly string[],
  index: number,
): string | { readonly reason: string } {
  for (let i = index - 1; i >= 0; i -= 1) {
    const first = firstWord(lines[i] ?? '');
    // A first word HAProxy reads from the environment refused the plan before (conditionalReason).
    if (typeof first !== 'string' || !sectionKeywords.has(first)) continue;
    const [, name] = splitConfigLine(lines[i] ?? '').words;
    const proxy = literal(name);
    if ((first !== 'backend' && first !== 'listen') || proxy === undefined) {
      return { reason: `line ${index + 1} is a server line outside a backend or listen section` };
    }
    return runtimeNamePattern.test(proxy)
      ? proxy
      : { reason: `the name of the section of line ${index + 1} cannot be used at runtime` };
  }
  return { reason: `line ${index + 1} is outside every section` };
}
