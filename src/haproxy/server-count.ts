/**
 * How many servers a configuration declares, and the bounds the lint holds them to. `haproxy
 * -c` takes time that grows with the square of one backend's servers and memory that grows
 * with all of them (HAProxy 2.6, measured: one backend of 8,192 servers 0.5-1 s of CPU, of
 * 16,384 3.4 s, of 50,000 44 s; 65,536 servers in eight backends 4-5 s and 280 MB), and one
 * `server-template` line declares as many as its count says. Without a bound, a template line
 * kept a check busy past the sandbox's 30 s limit, and with it the reconciler's checks.
 *
 * The bounds follow the controller's: a backend serves at most 4,096 endpoints
 * (model-backends.ts), which the default template renders in 8,192 server slots
 * (server-slots.ts); a unit test holds the two equal.
 */
import type { ConfigWord } from './config-words.ts';
import { type LintFinding, haproxyLintReasons as reasons, lintFinding } from './lint-finding.ts';
import { literal } from './word-rules.ts';

/** Servers one section (a backend or listen section) may declare. */
export const maxServersPerProxy = 8192;

/** Servers the whole configuration may declare: eight full backends. */
export const maxServersInConfig = 65_536;

/**
 * The servers `server-template <prefix> <count>` declares: `N` (servers 1 to N) or `LOW-HIGH`,
 * as HAProxy reads them (`_srv_parse_tmpl_range`: `atoi` of each side). Only plain digits are
 * read, at most nine a side so `atoi` cannot overflow; anything else (a sign, spaces, a second
 * `-`, an environment variable) is undefined: the lint refuses what it cannot count exactly.
 * A range HAProxy refuses (`0`, LOW above HIGH) counts 0 and is left to HAProxy.
 */
export function templateServerCount(word: ConfigWord | undefined): number | undefined {
  const match = /^(\d{1,9})(?:-(\d{1,9}))?$/.exec(literal(word) ?? '');
  if (match === null) return undefined;
  const [, first = '', second] = match;
  const low = second === undefined ? 1 : Number(first);
  const high = Number(second ?? first);
  return Math.max(0, high - low + 1);
}

/** The refusal of a `server-template` count the lint cannot read. */
export function templateCountFinding(
  lineNumber: number,
  word: ConfigWord | undefined,
): LintFinding | undefined {
  if (templateServerCount(word) !== undefined) return undefined;
  const references = word?.references.map((reference) => `\${${reference.name}}`) ?? [];
  return lintFinding(
    lineNumber,
    `server-template ${references.join('')}${word?.text ?? ''}`,
    reasons.ServerCountUnreadable,
    'is not a server count haptic can read',
    'write the count as a whole number N or a range LOW-HIGH of whole numbers, literally',
  );
}

/** Servers a line declares: its count and the directive that declares them, for a finding. */
export interface DeclaredServers {
  readonly count: number;
  readonly directive: string;
}

/** Servers a `server` or `server-template` line (already allowed) declares. */
export function declaredServers(words: readonly ConfigWord[]): DeclaredServers | undefined {
  const [keyword, name, count] = words;
  if (keyword?.text === 'server') return { count: 1, directive: `server ${name?.text ?? ''}` };
  if (keyword?.text !== 'server-template') return undefined;
  return {
    count: templateServerCount(count) ?? 0,
    directive: `server-template ${name?.text ?? ''} ${count?.text ?? ''}`,
  };
}

/**
 * Servers counted while a configuration is walked: per section and in all. Each bound is
 * reported once, at the line that first goes past it.
 */
export class ServerTally {
  #inSection = 0;
  #total = 0;
  #sectionReported = false;
  #totalReported = false;

  /** A section starts: its count starts at 0. */
  openSection(): void {
    this.#inSection = 0;
    this.#sectionReported = false;
  }

  /** Counts what line `lineNumber` declares; the finding when it goes past a bound. */
  add(lineNumber: number, servers: DeclaredServers): LintFinding | undefined {
    this.#inSection += servers.count;
    this.#total += servers.count;
    if (!this.#sectionReported && this.#inSection > maxServersPerProxy) {
      this.#sectionReported = true;
      return lintFinding(
        lineNumber,
        servers.directive,
        reasons.TooManyServers,
        `brings its section to ${String(this.#inSection)} servers, more than the ${String(maxServersPerProxy)} one backend may declare (the server slots of the 4,096 endpoints the controller gives a backend at most); haproxy -c takes time that grows with the square of a backend's servers`,
        `declare at most ${String(maxServersPerProxy)} servers per backend: lower the server-template count, or spread the servers over several backends`,
      );
    }
    if (!this.#totalReported && this.#total > maxServersInConfig) {
      this.#totalReported = true;
      return lintFinding(
        lineNumber,
        servers.directive,
        reasons.TooManyServers,
        `brings the configuration to ${String(this.#total)} servers, more than the ${String(maxServersInConfig)} haptic lets haproxy -c check in its time and memory limits`,
        'declare fewer servers: lower server-template counts, or render fewer backends',
      );
    }
    return undefined;
  }
}
