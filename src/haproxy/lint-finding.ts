/**
 * What the HAProxy configuration lint reports: one finding per refused line, with the
 * keyword as HAProxy reads it, a reason code and a sentence that says what to do.
 */
import type { Problem } from '../problem.ts';

export const haproxyLintReasons = {
  /** The file holds a NUL byte (or a word an escape turns into one). */
  NulByte: 'NulByte',
  /** HAProxy cannot split the line into words (unmatched quote, bad escape). */
  LineUnreadable: 'LineUnreadable',
  /** More words on a line than HAProxy reads (word-limit.ts): it skips the line. */
  TooManyWords: 'TooManyWords',
  /** A `[scope]` line. */
  ScopeLine: 'ScopeLine',
  /** A section, keyword, option, action or setting that is not on the allow-list. */
  KeywordNotAllowed: 'KeywordNotAllowed',
  /** A keyword, option, action or setting that comes from an environment variable. */
  KeywordFromEnvironment: 'KeywordFromEnvironment',
  /** An environment variable that is not on the allow-list, or read in a refused form. */
  EnvironmentNotAllowed: 'EnvironmentNotAllowed',
  /** A file argument outside the configuration's own directory. */
  FileOutsideDirectory: 'FileOutsideDirectory',
  /** A relative file argument before `default-path config` anchored relative paths. */
  DefaultPathMissing: 'DefaultPathMissing',
  /** A Unix socket, file descriptor or other non-IP address. */
  AddressNotAllowed: 'AddressNotAllowed',
  /** A sample fetch that reads HAProxy's environment (`env()`). */
  FetchNotAllowed: 'FetchNotAllowed',
  /** A section starts inside `.if` ... `.endif`. */
  SectionInConditional: 'SectionInConditional',
  /** A file read as a crt-list holds PEM data (a certificate or a private key). */
  PemInCrtList: 'PemInCrtList',
  /** A `server-template` count that is not a literal N or LOW-HIGH (server-count.ts). */
  ServerCountUnreadable: 'ServerCountUnreadable',
  /** More servers in one section, or in the configuration, than haproxy -c is given to check. */
  TooManyServers: 'TooManyServers',
} as const;

export type HaproxyLintReason = (typeof haproxyLintReasons)[keyof typeof haproxyLintReasons];

/** A refused line; its message reads `line 12: "lua-load" ...; <what to do>.` */
export interface LintFinding extends Problem<HaproxyLintReason> {
  /** 1-based line number in the file. */
  readonly line: number;
  /** The directive as HAProxy reads it (`lua-load`, `http-request use-service`, `bind crt`). */
  readonly directive: string;
}

/** Longest directive quoted in a message. */
const maxDirectiveChars = 80;

/** Control bytes as `\xHH`, so a message stays one readable line. */
export function printable(text: string): string {
  const shown = Array.from(text, (char) => {
    const code = char.charCodeAt(0);
    return code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : char;
  }).join('');
  return shown.length > maxDirectiveChars ? `${shown.slice(0, maxDirectiveChars)}…` : shown;
}

/** A finding whose message says what is wrong (`problem`) and what to do (`fix`). */
export function lintFinding(
  line: number,
  directive: string,
  reason: HaproxyLintReason,
  problem: string,
  fix: string,
): LintFinding {
  const shown = printable(directive);
  return {
    line,
    directive: shown,
    reason,
    message: `line ${line}: "${shown}" ${problem}; ${fix}.`,
  };
}
