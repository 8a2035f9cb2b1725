/**
 * Rules every word of every line must pass, whatever the keyword: no NUL, environment
 * variables only from the allow-list and only in forms whose words HAProxy 2.6 and 3.x read
 * alike, no `env()` sample fetch, and every file HAProxy would open while parsing (`-f` lists,
 * `file`, `crt`, map converters, ...) inside the configuration's own directory.
 */
import { isIP } from 'node:net';
import type { ConfigLine, ConfigWord } from './config-words.ts';
import {
  addressArgumentWords,
  addressPrefixes,
  allowedEnvironment,
  fileArgumentWords,
} from './keywords.ts';
import { type LintFinding, haproxyLintReasons as reasons, lintFinding } from './lint-finding.ts';

export interface WordContext {
  /** `default-path config` came first, so relative paths resolve in the configuration's directory. */
  readonly pathsAnchored: boolean;
}

/** A relative path that stays inside the directory it is resolved against. */
export function isInDirectoryPath(path: string): boolean {
  if (!/^[A-Za-z0-9._+/-]+$/.test(path) || path.startsWith('/')) return false;
  return path.split('/').every((segment) => segment !== '..');
}

/** The word's text when it is literal (reads no environment variable). */
export function literal(word: ConfigWord | undefined): string | undefined {
  return word !== undefined && word.references.length === 0 ? word.text : undefined;
}

/** Names after `$` that HAProxy's address parser expands (`env_expand()`), e.g. `$HOST`. */
function expandedNames(text: string): string[] {
  return [...text.matchAll(/\$\{?([A-Za-z0-9_]+)/g)].map((match) => match[1] ?? '');
}

/**
 * Why an address HAProxy will parse is refused, or undefined: only IP addresses and host
 * names with a port (optionally `ipv4@`, `tcp@`, `udp@`, ...), comma-separated; never a Unix
 * socket path, `fd@`, `sockpair@`, `abns@` or a variable outside the allow-list.
 */
export function addressProblem(word: ConfigWord): string | undefined {
  for (const element of word.text.split(',')) {
    const at = element.indexOf('@');
    const prefix = at === -1 ? '' : element.slice(0, at + 1);
    const rest = element.slice(at + 1);
    if (prefix !== '' && !addressPrefixes.has(prefix)) {
      return `uses the address family "${prefix}", which could reach sockets or descriptors of the Pod`;
    }
    if (rest.includes('@') || rest.includes('/')) {
      return 'names a Unix socket or path instead of an IP address or host name';
    }
    const name = expandedNames(rest).find((found) => !allowedEnvironment.has(found));
    if (name !== undefined) return `reads the environment variable ${name}`;
  }
  return undefined;
}

/** `host[:port]` without its port: the text before the last colon (HAProxy's own split). */
function withoutPort(address: string): string {
  const colon = address.lastIndexOf(':');
  return colon === -1 ? address : address.slice(0, colon);
}

function isIpLiteral(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return isIP(bare) !== 0;
}

/**
 * Why an address HAProxy resolves while it parses (`bind`, `log`, `nameserver`, `addr`,
 * `agent-addr`) is refused: it names a host instead of an IP address. The check sandbox has no
 * network (src/sandbox/network-isolation.ts), so such a name can never be resolved where the
 * configuration is checked; only IP addresses, an empty or `*` host and the allowed variables
 * pass. `server` addresses are not held to this: `init-addr ...,none` or a `resolvers` section
 * leaves their names to the serving HAProxy.
 */
export function hostNameProblem(word: ConfigWord): string | undefined {
  if (word.references.length > 0 || word.text.includes('$')) return undefined;
  for (const element of word.text.split(',')) {
    const at = element.indexOf('@');
    const rest = element.slice(at + 1);
    const host = withoutPort(rest);
    if (host === '' || host === '*' || isIpLiteral(rest) || isIpLiteral(host)) continue;
    return `names the host "${host}", which HAProxy resolves while the configuration is checked, where there is no network`;
  }
  return undefined;
}

function environmentFinding(line: ConfigLine, word: ConfigWord): LintFinding | undefined {
  for (const reference of word.references) {
    const directive = `\${${reference.name}}`;
    const refuse = (problem: string, fix: string): LintFinding =>
      lintFinding(line.number, directive, reasons.EnvironmentNotAllowed, problem, fix);
    if (!allowedEnvironment.has(reference.name)) {
      return refuse(
        'reads an environment variable that is not on the allow-list',
        `only ${[...allowedEnvironment].join(', ')} may be read; write the value into the template instead`,
      );
    }
    if (reference.expandsWords) {
      return refuse('splits a variable into several words ([*])', 'write ${NAME} without [*]');
    }
    if (reference.hasDefault) {
      return refuse('has a default value', 'write ${NAME} without -default');
    }
    if (!reference.followedByText) {
      return refuse(
        'is not followed by literal text in the same quotes, so HAProxy 3.x drops or joins the word when it is unset',
        'write it as in "${HAPTIC_LISTEN_ADDRESS}:8080"',
      );
    }
  }
  return undefined;
}

/** Files named inside a word's sample expressions: map converters and `jwt_verify`'s key. */
function sampleFiles(text: string): string[] {
  const maps = [...text.matchAll(/(?:^|[^A-Za-z0-9_.])map(?:_[A-Za-z0-9_]+)?\(([^,)]*)/gi)];
  const keys = [...text.matchAll(/jwt_verify\([^,)]*,([^,)]*)/gi)];
  return [...maps, ...keys].map((match) => match[1] ?? '');
}

function fileFinding(
  line: ConfigLine,
  directive: string,
  path: ConfigWord | string,
  context: WordContext,
): LintFinding | undefined {
  const text = typeof path === 'string' ? path : literal(path);
  if (text === undefined || !isInDirectoryPath(text)) {
    return lintFinding(
      line.number,
      `${directive} ${typeof path === 'string' ? path : path.text}`,
      reasons.FileOutsideDirectory,
      'names a file outside the configuration directory',
      'use a relative path without ".." or variables (maps/hosts.map, ssl/site.pem) and deliver the file with the configuration',
    );
  }
  if (!context.pathsAnchored) {
    return lintFinding(
      line.number,
      `${directive} ${text}`,
      reasons.DefaultPathMissing,
      'names a relative file before "default-path config", so HAProxy resolves it against its working directory',
      'put "default-path config" at the top of the global section',
    );
  }
  return undefined;
}

/** The first rule a line's words break, or undefined. */
export function wordFinding(line: ConfigLine, context: WordContext): LintFinding | undefined {
  const { words } = line;
  for (const [index, word] of words.entries()) {
    if (word.text.includes('\0')) {
      return lintFinding(
        line.number,
        'NUL',
        reasons.NulByte,
        'is a NUL byte (\\x00), which ends a word early for HAProxy',
        'remove it',
      );
    }
    const environment = environmentFinding(line, word);
    if (environment !== undefined) return environment;
    if (/env\s*\(/i.test(word.text)) {
      return lintFinding(
        line.number,
        'env()',
        reasons.FetchNotAllowed,
        "reads HAProxy's environment",
        'write the value into the template instead',
      );
    }
    for (const file of sampleFiles(word.text)) {
      const found = fileFinding(line, 'map', file, context);
      if (found !== undefined) return found;
    }
    const next = words[index + 1];
    if (next === undefined) continue;
    if (fileArgumentWords.has(word.text.toLowerCase())) {
      // The directive `errorfile <code> <file>` names its file after the status code; the
      // rule option `errorfile <file>` right after the word.
      const file = index === 0 && word.text.toLowerCase() === 'errorfile' ? words[2] : next;
      const found = file === undefined ? undefined : fileFinding(line, word.text, file, context);
      if (found !== undefined) return found;
    }
    if (addressArgumentWords.has(word.text.toLowerCase())) {
      const problem = addressProblem(next) ?? hostNameProblem(next);
      if (problem !== undefined) {
        return lintFinding(
          line.number,
          `${word.text} ${next.text}`,
          reasons.AddressNotAllowed,
          problem,
          'use an IP address, such as 10.0.0.1 or 10.0.0.1:8080',
        );
      }
    }
  }
  return undefined;
}
