/**
 * Whether a new file set differs from the one HAProxy runs only in ways its runtime API
 * expresses exactly, and which commands those are. One derivation for both ends: the
 * controller skips `haproxy -c` for such a set (the last checked one differs from it only in
 * server addresses and the `disabled` flag), the agent applies it without a reload.
 *
 * Runtime-expressible: every file but haproxy.cfg identical (by digest), haproxy.cfg with the
 * same lines except `server <name> <ip>:<port> [settings…] [disabled]` lines of a `backend`
 * or `listen` section that keep their name and settings and change only the address, the port
 * or the trailing `disabled` (a server slot filled, emptied or re-addressed). Anything else —
 * another line, a map, a certificate, a host name or an environment variable in an address —
 * is a reload, with the first reason found. `rewriteServerSlots` is the other direction: the
 * controller writes slot changes into the last rendered haproxy.cfg instead of rendering anew.
 */
import { isIP } from 'node:net';
import {
  type RuntimeChangeBody,
  configFileName,
  runtimeNamePattern,
} from '../agent-api/api-types.ts';
import type { FileDigest } from '../agent-api/file-set-digest.ts';
import { type ConfigWord, splitConfigLine } from './config-words.ts';
import { inspectHaproxyConfig } from './config-lint.ts';
import type { FileLintFinding } from './files-lint.ts';
import { conditionalMacros, otherSections, sectionKinds } from './keywords.ts';

/** One side of the comparison: every file's digest, and haproxy.cfg's text. */
export interface FileSetText {
  readonly files: readonly FileDigest[];
  readonly config: string;
}

/** A server slot as the new haproxy.cfg declares it: what a runtime change request carries. */
export type ServerChange = RuntimeChangeBody;

export type RuntimePlan =
  | {
      readonly runtime: true;
      readonly changes: readonly ServerChange[];
      /** The changed lines of the new haproxy.cfg, as written (for the lint). */
      readonly lines: readonly string[];
    }
  | { readonly runtime: false; readonly reason: string };

const sectionKeywords: ReadonlySet<string> = new Set([
  ...Object.keys(sectionKinds),
  ...otherSections,
]);

function reload(reason: string): RuntimePlan {
  return { runtime: false, reason };
}

function literal(word: ConfigWord | undefined): string | undefined {
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

interface ServerLine {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly disabled: boolean;
  /** The settings between the address and the trailing `disabled`. */
  readonly settings: readonly string[];
}

function serverLine(text: string): ServerLine | undefined {
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
const unreadable = Symbol('unreadable');

/**
 * The first word of a line as HAProxy reads it: undefined for a blank, comment or scope line,
 * `unreadable` when its text is not in the line or the line cannot be read. A plain keyword
 * (`^\s*([A-Za-z-]+)(?:\s|$)`) is scanned without splitting the line: at a thousand backends
 * this runs for every line of every runtime change. Anything else is split as HAProxy splits
 * it, so a quoted or escaped keyword (`"backend" b`, `\x62ackend b`) is the keyword it reads.
 */
function firstWord(line: string): string | typeof unreadable | undefined {
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
function proxyOf(lines: readonly string[], index: number): string | { readonly reason: string } {
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

/**
 * Why no line of `lines` may change at runtime, if none may: a conditional block (`.if` …
 * `.endif`) decides which lines HAProxy reads, which a runtime change does not follow (a
 * change in a branch HAProxy skips would go to the server of the branch it reads), and a first
 * word read from the environment may be one.
 */
function conditionalReason(lines: readonly string[]): string | undefined {
  for (const [index, line] of lines.entries()) {
    const first = firstWord(line);
    if (first === unreadable) {
      return `the first word of line ${index + 1} is known only when HAProxy reads it`;
    }
    if (first !== undefined && conditionalMacros.has(first)) {
      return `line ${index + 1} is a conditional block (${first}), which runtime changes do not follow`;
    }
  }
  return undefined;
}

/**
 * Configurations whose answer is known: the last base asked about and, once a plan from it is
 * made, the configuration that plan makes. A runtime change does not change the answer (its
 * changed lines are server lines before and after), so a run of endpoint changes, each starting
 * from the one before, and plans from one base to several agents read the lines once.
 */
let conditionalMemo: readonly { readonly text: string; readonly reason: string | undefined }[] = [];

/** conditionalReason of `base` (the configuration a plan starts from), split as `lines`. */
function baseConditionalReason(base: string, lines: readonly string[]): string | undefined {
  const known = conditionalMemo.find((entry) => entry.text === base);
  if (known !== undefined) return known.reason;
  const reason = conditionalReason(lines);
  conditionalMemo = [{ text: base, reason }];
  return reason;
}

function sameSettings(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, i) => word === b[i]);
}

/** Why `next`'s files other than haproxy.cfg are not `previous`'s, if they are not. */
function otherFilesReason(
  previous: readonly FileDigest[],
  next: readonly FileDigest[],
): string | undefined {
  const before = new Map(previous.map((file) => [file.path, file.digest]));
  if (before.size !== next.length) return 'files were added or removed';
  for (const file of next) {
    const digest = before.get(file.path);
    if (digest === undefined) return `${file.path} is new`;
    if (file.path !== configFileName && digest !== file.digest) return `${file.path} changed`;
  }
  return undefined;
}

/**
 * The plan for haproxy.cfg lines `old` → `lines` (as many), which are equal at every index
 * but `candidates` (ascending): each changed candidate must be a slot line changed in its
 * address, port or `disabled` only.
 */
function slotPlan(
  texts: { readonly base: string; readonly next: string },
  old: readonly string[],
  lines: readonly string[],
  candidates: readonly number[],
): RuntimePlan {
  const changes: ServerChange[] = [];
  const changed: string[] = [];
  for (const i of candidates) {
    const text = lines[i] ?? '';
    if (text === old[i]) continue;
    const was = serverLine(old[i] ?? '');
    const now = serverLine(text);
    if (was === undefined || now === undefined) {
      return reload(`${configFileName} line ${i + 1} changed and is not a server slot`);
    }
    if (was.name !== now.name || !sameSettings(was.settings, now.settings)) {
      return reload(`${configFileName} line ${i + 1} changes more than the server's address`);
    }
    // Asked of the old lines: a changed line is a server line in both, so neither is a conditional.
    const conditional = baseConditionalReason(texts.base, old);
    if (conditional !== undefined) return reload(conditional);
    const backend = proxyOf(lines, i);
    if (typeof backend !== 'string') return reload(backend.reason);
    changes.push({
      backend,
      server: now.name,
      address: now.address,
      port: now.port,
      state: now.disabled ? 'maint' : 'ready',
    });
    changed.push(text);
  }
  if (changes.length > 0) {
    conditionalMemo = [
      { text: texts.base, reason: undefined },
      { text: texts.next, reason: undefined },
    ];
  }
  return { runtime: true, changes, lines: changed };
}

/** The runtime commands that turn `previous` into `next`, or why a reload is needed. */
export function runtimePlan(previous: FileSetText, next: FileSetText): RuntimePlan {
  const reason = otherFilesReason(previous.files, next.files);
  if (reason !== undefined) return reload(reason);
  const old = previous.config.split('\n');
  const lines = next.config.split('\n');
  if (old.length !== lines.length) return reload(`${configFileName} has other lines`);
  const candidates: number[] = [];
  for (let i = 0; i < lines.length; i += 1) if (lines[i] !== old[i]) candidates.push(i);
  return slotPlan({ base: previous.config, next: next.config }, old, lines, candidates);
}

/**
 * `runtimePlan(previous, { files: next, config: rewrite.config })` for a rewrite of
 * `previous.config` (rewriteServerSlots): the rewrite names the lines it changed, so the
 * texts are not compared line by line again (a unit test holds both plans equal).
 */
export function rewrittenPlan(
  previous: readonly FileDigest[],
  next: readonly FileDigest[],
  rewrite: SlotRewrite,
): RuntimePlan {
  const reason = otherFilesReason(previous, next);
  if (reason !== undefined) return reload(reason);
  return slotPlan(
    { base: rewrite.base, next: rewrite.config },
    rewrite.before,
    rewrite.after,
    rewrite.changed,
  );
}

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

/** A rewrite of haproxy.cfg: its lines before and after, equal at every index but `changed`. */
export interface SlotRewrite {
  /** The configuration rewritten. */
  readonly base: string;
  readonly config: string;
  readonly before: readonly string[];
  readonly after: readonly string[];
  /** The indexes of the rewritten lines, ascending (a line may be rewritten to itself). */
  readonly changed: readonly number[];
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

/**
 * The runtime API commands for one change, in order: an emptied slot is taken out of
 * service before its address changes, a filled one gets its address before it serves.
 */
export function serverCommands(change: ServerChange): readonly string[] {
  const target = `${change.backend}/${change.server}`;
  const address = `set server ${target} addr ${change.address} port ${change.port}`;
  return change.state === 'maint'
    ? [`set server ${target} state maint`, address]
    : [address, `set server ${target} state ready`];
}

/**
 * What the changed slot lines are read after: a backend section of a configuration whose
 * relative paths are anchored, as in every configuration the lint accepts whole (a server's
 * `ca-file ca/web.pem` is otherwise DefaultPathMissing, and its slots could never change).
 */
const slotLineContext = ['global', '  default-path config', 'backend slots'];

/**
 * The lint's findings for changed slot lines, read as lines of a backend section: the rest of
 * a runtime-expressible set is the previous set's, which was linted whole. A finding's line is
 * the changed line's place among `lines` (1 for the first), and its message says so.
 */
export function slotLineFindings(lines: readonly string[]): readonly FileLintFinding[] {
  const text = [...slotLineContext, ...lines].join('\n');
  return inspectHaproxyConfig(text).findings.map((finding) => {
    const line = finding.line - slotLineContext.length;
    return {
      ...finding,
      line,
      message: finding.message.replace(
        `line ${String(finding.line)}:`,
        `changed server line ${String(line)}:`,
      ),
      file: configFileName,
    };
  });
}
