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
import { type RuntimeChangeBody, configFileName } from '../agent-api/api-types.ts';
import type { FileDigest } from '../agent-api/file-set-digest.ts';
import { inspectHaproxyConfig } from './config-lint.ts';
import type { FileLintFinding } from './files-lint.ts';
import { conditionalMacros } from './keywords.ts';
import { firstWord, proxyOf, serverLine, unreadable } from './server-lines.ts';

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

function reload(reason: string): RuntimePlan {
  return { runtime: false, reason };
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
