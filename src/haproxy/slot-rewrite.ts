/**
 * The controller's side of a runtime change: haproxy.cfg with the changed server slots
 * rewritten in place, as the template writes a slot, instead of a render from scratch; the
 * lines it changed are named, so the runtime plan need not compare the texts again.
 */
import type { ServerChange, SlotRewrite } from './runtime-changes.ts';
import {
  firstWord,
  literal,
  parseServerAddress,
  sectionKeywords,
  serverLine,
  unreadable,
} from './server-lines.ts';
import { splitConfigLine } from './config-words.ts';

/** The `server` line a change gives `line`: the address replaced, `disabled` set or cleared. */
function rewriteServerLine(line: string, change: ServerChange): string | undefined {
  const was = serverLine(line);
  if (was === undefined || was.name !== change.server) return undefined;
  const endpoint = (address: string, port: number): string =>
    `${address.includes(':') ? `[${address}]` : address}:${port}`;
  const at = line.indexOf(
    endpoint(was.address, was.port),
    line.indexOf(was.name) + was.name.length,
  );
  // The new endpoint must read back as one (no line break, no host name): the rewrite changes
  // the text only inside the lines it reports.
  if (at === -1 || parseServerAddress(endpoint(change.address, change.port)) === undefined) {
    return undefined;
  }
  const replaced =
    line.slice(0, at) +
    endpoint(change.address, change.port) +
    line.slice(at + endpoint(was.address, was.port).length);
  const bare = was.disabled ? replaced.replace(/\s+disabled\s*$/, '') : replaced.trimEnd();
  return change.state === 'maint' ? `${bare} disabled` : bare;
}

/** The offset each line of `text` starts at (as `text.split('\n')` splits it). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
    starts.push(at + 1);
  }
  return starts;
}

/** The index of the line that holds offset `at` (`starts` ascending, `starts[0]` 0). */
function lineAt(starts: readonly number[], at: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] ?? 0) <= at) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * The indexes of the section lines that open a `backend` or `listen` section named in
 * `names`. A section line names a proxy in its text, so only the lines holding one of the
 * names are read (found by searching the text): at a thousand backends a runtime change
 * reads a few lines, not every line.
 */
function proxySectionLines(
  config: string,
  starts: readonly number[],
  lines: readonly string[],
  names: ReadonlySet<string>,
): number[] {
  const found = new Set<number>();
  const read = new Set<number>();
  for (const name of names) {
    if (name === '') continue;
    for (let at = config.indexOf(name); at !== -1; at = config.indexOf(name, at + 1)) {
      const index = lineAt(starts, at);
      if (read.has(index)) continue;
      read.add(index);
      const text = lines[index] ?? '';
      const first = firstWord(text);
      if (first !== 'backend' && first !== 'listen') continue;
      const proxy = literal(splitConfigLine(text).words[1]);
      if (proxy !== undefined && names.has(proxy)) found.add(index);
    }
  }
  return [...found].sort((a, b) => a - b);
}

/**
 * `config` with the slot lines of `changes` rewritten as the template writes a slot (the
 * address in place, a trailing `disabled` for a spare), or undefined when a slot is not a
 * single server line of the grammar above. The caller renders in full afterwards to confirm.
 * A server line belongs to the section line above it: the lines read are those of the
 * sections of the changed proxies, up to the next section line.
 */
export function rewriteServerSlots(
  config: string,
  changes: readonly ServerChange[],
): SlotRewrite | undefined {
  const before = config.split('\n');
  const lines = before.slice();
  const changed: number[] = [];
  const wanted = new Map(changes.map((change) => [`${change.backend}/${change.server}`, change]));
  const backends = new Set(changes.map((change) => change.backend));
  const starts = lineStarts(config);
  for (const section of proxySectionLines(config, starts, before, backends)) {
    const proxy = literal(splitConfigLine(before[section] ?? '').words[1]) ?? '';
    for (let i = section + 1; i < lines.length; i += 1) {
      const text = lines[i] ?? '';
      const first = firstWord(text);
      // Where the section ends is not known: the caller renders in full.
      if (first === unreadable) return undefined;
      if (first !== undefined && sectionKeywords.has(first)) break;
      if (first !== 'server') continue;
      const name = literal(splitConfigLine(text).words[1]);
      const change = wanted.get(`${proxy}/${name ?? ''}`);
      if (change === undefined) continue;
      const next = rewriteServerLine(text, change);
      if (next === undefined) return undefined;
      lines[i] = next;
      changed.push(i);
    }
  }
  return changed.length === changes.length
    ? {
        base: config,
        config: spliced(config, starts, lines, changed),
        before,
        after: lines,
        changed,
      }
    : undefined;
}

/** `text` with its lines `changed` (ascending) replaced by those of `lines`. */
function spliced(
  text: string,
  starts: readonly number[],
  lines: readonly string[],
  changed: readonly number[],
): string {
  let result = '';
  let copied = 0;
  for (const i of changed) {
    result += text.slice(copied, starts[i]) + (lines[i] ?? '');
    copied = (starts[i + 1] ?? text.length + 1) - 1;
  }
  return result + text.slice(copied);
}
