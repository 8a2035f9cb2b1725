/**
 * The values an Ingress annotation may hold, each parsed into a typed value or refused with the
 * form it should have. Annotation values are hostile text: none reaches HAProxy as written.
 * Every parser bounds the length, accepts a strict grammar and returns a value that a template
 * can write into haproxy.cfg without quoting (numbers, addresses, names) or that the parser
 * has put in the one form HAProxy reads safely (a regex for single quotes, a log-format text).
 *
 * A parser returns its value, or `{ expected }`: the form the value should have, a phrase that
 * completes "expected …" in the Event.
 */
import { isIP } from 'node:net';

export interface Expected {
  readonly expected: string;
}

export type Parsed<T> = T | Expected;

export function isExpected<T>(value: Parsed<T>): value is Expected {
  return typeof value === 'object' && value !== null && 'expected' in value;
}

/** Longest annotation value read at all. */
export const maxAnnotationValueLength = 4096;

export function parseBoolean(text: string): Parsed<boolean> {
  const value = text.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  return { expected: '"true" or "false"' };
}

/** A duration in milliseconds, at most a day. */
const maxDurationMs = 24 * 60 * 60 * 1000;
const durationUnits: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * A duration: whole seconds as ingress-nginx writes them (`60`), or a number with a unit
 * (`500ms`, `30s`, `5m`, `1h`) as HAProxy does; from 1 ms to 24 h.
 */
export function parseDuration(text: string): Parsed<number> {
  const match = /^([0-9]{1,9})(ms|s|m|h)?$/.exec(text.trim());
  const expected = {
    expected: 'whole seconds ("60") or a number with ms, s, m or h ("500ms", "5m"), 1 ms to 24 h',
  };
  if (match === null) return expected;
  const ms = Number(match[1]) * (durationUnits[match[2] ?? 's'] ?? 1000);
  if (ms < 1 || ms > maxDurationMs) return expected;
  return ms;
}

/** A duration as HAProxy reads it: milliseconds, or whole seconds when it is some. */
export function haproxyDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

const sizeUnits: Readonly<Record<string, number>> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/**
 * A size in bytes as nginx writes it: digits with an optional k, m or g (any case); `0` means
 * no limit (null). At most 64 GiB.
 */
export function parseSize(text: string): Parsed<number | null> {
  const match = /^([0-9]{1,12})([kmg]?)$/i.exec(text.trim());
  const expected = {
    expected: 'bytes with an optional k, m or g ("1m", "512k", "0" for no limit)',
  };
  if (match === null) return expected;
  const bytes = Number(match[1]) * (sizeUnits[(match[2] ?? '').toLowerCase()] ?? 1);
  if (bytes > 64 * 1024 ** 3) return expected;
  return bytes === 0 ? null : bytes;
}

/**
 * Most entries of an address list: the template writes them on one line, and the lint refuses
 * lines of more than 64 words.
 */
const maxRanges = 50;

/**
 * A comma-separated list of IPv4 or IPv6 addresses and CIDR ranges, in the form HAProxy reads
 * (`10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7`), at most 50.
 */
export function parseRanges(text: string): Parsed<readonly string[]> {
  const expected = {
    expected: 'a comma-separated list of IP addresses or CIDR ranges ("10.0.0.0/8,192.0.2.7")',
  };
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0 || items.length > maxRanges) return expected;
  const ranges: string[] = [];
  for (const item of items) {
    const [address = '', bits, extra] = item.split('/');
    const family = isIP(address);
    // An IPv6 zone (`fe80::1%eth0`) is an address to Node, not to HAProxy.
    if (family === 0 || extra !== undefined || address.includes('%')) return expected;
    if (bits !== undefined) {
      if (!/^[0-9]{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)) return expected;
      ranges.push(`${address.toLowerCase()}/${Number(bits)}`);
    } else {
      ranges.push(address.toLowerCase());
    }
  }
  return ranges;
}

export type RedirectCode = 301 | 302 | 303 | 307 | 308;
const redirectCodes: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export function parseRedirectCode(text: string): Parsed<RedirectCode> {
  const value = Number(text.trim());
  if (/^[0-9]{3}$/.test(text.trim()) && redirectCodes.has(value)) return value as RedirectCode;
  return { expected: 'one of 301, 302, 303, 307, 308' };
}

/**
 * Characters of a URL this controller writes: RFC 3986's unreserved, reserved and `%`. No
 * space, quote, backslash, `<`, `>`, `{`, `}`, `|`, `^` or backtick.
 */
const urlCharacters = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
const maxUrlLength = 2048;

/** `%` doubled: HAProxy reads a redirect's location as a log-format text. */
function logFormatText(text: string): string {
  return text.replace(/%/g, '%%');
}

/**
 * An absolute http(s) URL, at most 2,048 characters of RFC 3986's characters; returned in
 * HAProxy's log-format form (`%` doubled), ready for `redirect location`.
 */
export function parseRedirectUrl(text: string): Parsed<string> {
  const value = text.trim();
  const expected = {
    expected: 'an absolute http or https URL of RFC 3986 characters ("https://example.com/new")',
  };
  if (value.length > maxUrlLength || !urlCharacters.test(value) || /'/.test(value)) {
    return expected;
  }
  if (!/^https?:\/\/[^/?#]/i.test(value) || !URL.canParse(value)) return expected;
  return logFormatText(value);
}

/** Characters of a URL path: RFC 3986 `pchar` and `/`, no `%` (no encoded bytes here). */
const pathCharacters = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/]*$/;

/** An absolute URL path of RFC 3986 characters without `%`, at most 1,024 (`/app`). */
export function parseUrlPath(text: string): Parsed<string> {
  const value = text.trim();
  if (value.length > 1024 || !pathCharacters.test(value)) {
    return { expected: 'an absolute URL path of letters, digits and -._~!$&()*+,;=:@/ ("/app")' };
  }
  return value;
}

const dnsLabel = '[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?';
const hostPattern = new RegExp(`^${dnsLabel}(\\.${dnsLabel})*(:[0-9]{1,5})?$`);

/** A DNS name with an optional port, lower case (`api.internal`, `api.internal:8080`). */
export function parseHostName(text: string): Parsed<string> {
  const value = text.trim().toLowerCase();
  const port = /:([0-9]+)$/.exec(value)?.[1];
  if (
    value.length > 253 ||
    !hostPattern.test(value) ||
    (port !== undefined && (Number(port) < 1 || Number(port) > 65535))
  ) {
    return { expected: 'a DNS name with an optional :port from 1 to 65535 ("api.internal")' };
  }
  return value;
}

/** How HAProxy talks to a backend's servers. */
export type BackendProtocol = 'HTTP' | 'HTTPS' | 'GRPC' | 'GRPCS' | 'H2C';
const protocols: ReadonlySet<string> = new Set(['HTTP', 'HTTPS', 'GRPC', 'GRPCS', 'H2C']);

/**
 * The protocol a Service port's appProtocol names (Kubernetes' `kubernetes.io/h2c`, `ws`,
 * `wss`, or an IANA name), or undefined for one this controller does not know.
 */
export function appProtocolOf(appProtocol: string | undefined): BackendProtocol | undefined {
  switch (appProtocol?.toLowerCase()) {
    case 'http':
    case 'kubernetes.io/ws':
      return 'HTTP';
    case 'https':
    case 'kubernetes.io/wss':
      return 'HTTPS';
    case 'h2c':
    case 'kubernetes.io/h2c':
      return 'H2C';
    case 'grpc':
      return 'GRPC';
    default:
      return undefined;
  }
}

export function parseBackendProtocol(text: string): Parsed<BackendProtocol> {
  const value = text.trim().toUpperCase();
  // ingress-nginx's AUTO_HTTP: HTTP/1.1 in clear, as HTTP.
  if (value === 'AUTO_HTTP') return 'HTTP';
  if (protocols.has(value)) return value as BackendProtocol;
  return { expected: 'one of HTTP, HTTPS, GRPC, GRPCS, H2C, AUTO_HTTP' };
}

/** A path regex as ingress-nginx takes it with use-regex, checked for HAProxy's PCRE2. */
export interface PathRegex {
  /** The path as written: matched case-insensitively from the path's start. */
  readonly source: string;
  /** Capture groups it has: what `$1`…`$9` of a rewrite-target may name. */
  readonly groups: number;
}

/**
 * Characters of a path regex: a URL path's and the regex operators. No space, quote, `#`,
 * backtick, `<`, `>` or `%`: the regex is written in single quotes in haproxy.cfg and as a
 * map file's key, both split at spaces, the map at `#`.
 */
const regexCharacters = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/|^?[\]{}\\]*$/;

/** Escapes of an operator: the character itself. */
const operatorEscapes = new Set('.\\/()[]{}|^$?*+-');
/** Escapes of a class: digits, word characters, spaces and their complements. */
const classEscapes = new Set('dwsDWS');

/**
 * What JavaScript and PCRE2 would read differently in a class starting after `[` at `from`,
 * and where the class ends (the index of its `]`).
 */
function classProblem(source: string, from: number): { problem?: string; end: number } {
  let i = from;
  if (source[i] === '^') i += 1;
  if (source[i] === ']') return { problem: 'an empty character class', end: i };
  // `[:alpha:]` outside a class is a POSIX class PCRE2 refuses, a class of `:alph` to JavaScript.
  if (':.='.includes(source[from] ?? '')) {
    return { problem: 'a class starting with ":", "." or "=" (POSIX syntax to PCRE2)', end: i };
  }
  // A `-` between two members makes a range; first or last in the class it is a literal.
  let dashBefore = false;
  const first = i;
  for (; i < source.length; i += 1) {
    const c = source[i];
    if (c === ']') return { end: i };
    if (c === '[' && ':.='.includes(source[i + 1] ?? '')) {
      return { problem: 'a POSIX class ("[:", "[.", "[=" in a class)', end: i };
    }
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      const rangeAfter = source[i + 2] === '-' && source[i + 3] !== ']';
      if (classEscapes.has(next) && (dashBefore || rangeAfter)) {
        return { problem: 'a range from a class escape ("[\\d-z]")', end: i };
      }
      i += 1;
      dashBefore = false;
      continue;
    }
    dashBefore = c === '-' && i > first;
  }
  return { problem: 'an unterminated character class', end: i };
}

/**
 * A regex that JavaScript and PCRE2 read alike: no `(?` construct but `(?:` (no lookbehind,
 * inline options, named groups or conditionals), no escape but of an operator or a class
 * (`\d \w \s \D \W \S`), and no class PCRE2 reads otherwise: an empty one (`[]`, `[^]`: a
 * literal `]` in PCRE2, which could read the parentheses after it differently), a POSIX class
 * (`[[:alpha:](]` is one class in PCRE2, a class and a group in JavaScript), a range from a
 * class escape (`[\d-z]`, which PCRE2 does not compile).
 */
function regexProblem(source: string): string | undefined {
  for (let i = 0; i < source.length; i += 1) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (!operatorEscapes.has(next) && !classEscapes.has(next)) {
        return 'an escape other than \\d \\w \\s \\D \\W \\S or of an operator';
      }
      i += 1;
    } else if (c === '[') {
      const found = classProblem(source, i + 1);
      if (found.problem !== undefined) return found.problem;
      i = found.end;
    } else if (c === '(' && source[i + 1] === '?' && source[i + 2] !== ':') {
      return 'a "(?" construct other than "(?:"';
    } else if (c === '{' && !/^\{[0-9]{1,3}(,[0-9]{0,3})?\}/.test(source.slice(i))) {
      // `{,n}` is a quantifier to PCRE2 10.43+, text to JavaScript; bounds past 65,535 do not
      // compile: a brace opens a quantifier of at most 999 here, and nothing else.
      return 'a "{" that is not a quantifier {n}, {n,} or {n,m} of at most 999';
    }
  }
  return undefined;
}

/**
 * A path regex (use-regex, rewrite-target): at most 1,024 characters starting with `/`, of
 * path characters and regex operators, one that compiles with the same meaning in PCRE2 (see
 * regexProblem). Its capture groups are counted.
 */
export function parsePathRegex(text: string): Parsed<PathRegex> {
  const expected = (why: string): Expected => ({
    expected: `a regular expression starting with "/" of path characters and ()[]{}|^$?*+.\\ (${why})`,
  });
  if (text.length > 1024 || !regexCharacters.test(text))
    return expected('no space, quote, "#" or "%"');
  const problem = regexProblem(text);
  if (problem !== undefined) return expected(`it has ${problem}`);
  let compiled: RegExp;
  try {
    compiled = new RegExp(`${text}|`);
  } catch {
    return expected('it does not compile');
  }
  const groups = (compiled.exec('')?.length ?? 1) - 1;
  return { source: text, groups };
}

/** A rewrite target in HAProxy's form: `\1`…`\9` for `$1`…`$9` (its grammar has no `%`). */
export interface RewriteTarget {
  readonly format: string;
  /** The highest group it names (0: none). */
  readonly highestGroup: number;
}

/**
 * ingress-nginx's rewrite-target: an absolute path of URL path characters with `$1`…`$9`
 * naming the path regex's capture groups (`/$2`, `/api/$1`), at most 1,024 characters.
 */
export function parseRewriteTarget(text: string): Parsed<RewriteTarget> {
  const value = text.trim();
  if (value.length > 1024 || !/^\/?([A-Za-z0-9\-._~!&()*+,;=:@/]|\$[0-9])*$/.test(value)) {
    return {
      expected: 'an absolute path of URL path characters with $1…$9 for the path\'s groups ("/$2")',
    };
  }
  let highestGroup = 0;
  const format = value.replace(/\$([0-9])/g, (_, digit: string) => {
    highestGroup = Math.max(highestGroup, Number(digit));
    return `\\${digit}`;
  });
  return {
    format: format.startsWith('/') || format.startsWith('\\') ? format : `/${format}`,
    highestGroup,
  };
}

/** `text` as a PCRE2 literal: every operator escaped. */
export function regexLiteral(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
