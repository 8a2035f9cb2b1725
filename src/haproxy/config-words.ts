/**
 * HAProxy's own way of splitting a configuration line into words, as `readcfgfile()` and
 * `parse_line()` do it in HAProxy 2.6 to 3.2 (src/cfgparse.c, src/tools.c):
 * - leading C `isspace()` bytes are skipped (space, \t, \n, \v, \f, \r); a line whose first
 *   other byte is `[` is a scope line, not a directive;
 * - then, outside quotes, any run of `isspace()` bytes separates words, and NUL, LF or a CR met
 *   at the start of a token ends the line (a CR inside a run of spaces is part of the run);
 * - `#` outside quotes starts a comment; single quotes are literal; double quotes keep spaces;
 * - a backslash outside single quotes escapes a space, `\`, `#`, `'`, `"` (and `$` inside
 *   double quotes), makes `\t` `\n` `\r` control bytes and `\xHH` any byte (other hex is an
 *   error); before any other byte it stays a backslash;
 * - `$NAME`, `${NAME}`, `${NAME[*]}` (split into words) and `${NAME-default}` inside double
 *   quotes read the environment; `.LINE`, `.FILE`, `.SECTION` are HAProxy's own variables;
 * - a line of more than 64 words is refused and skipped whole, and HAProxy 2.6 counts a run of
 *   spaces at the end of the line, or before its comment, as one more word
 *   (word-limit.ts).
 * Every byte HAProxy treats specially is ASCII, and UTF-8 decoding never swallows an ASCII
 * byte, so reading the configuration as UTF-8 text keeps every word boundary.
 */

/** Most words HAProxy reads on one configuration line (MAX_LINE_ARGS). */
export const maxLineWords = 64;

export interface EnvironmentReference {
  /** The variable's name (`HAPTIC_LISTEN_ADDRESS`, `.LINE`). */
  readonly name: string;
  /** `${NAME[*]}`: the value is split into several words. */
  readonly expandsWords: boolean;
  /** `${NAME-default}`: a default value stands in when the variable is unset. */
  readonly hasDefault: boolean;
  /**
   * Literal text follows the reference inside the same quotes, so the word exists even when
   * the variable is unset (HAProxy 3.x drops a word that only held an unset variable, and
   * 3.2 joins the next word to one that ends with it).
   */
  readonly followedByText: boolean;
}

export interface ConfigWord {
  /**
   * The word as HAProxy reads it when the environment variables it names are unset: quotes
   * and escapes resolved, references replaced by their default value or nothing.
   */
  readonly text: string;
  /** Environment variables the word reads, in order; empty for a literal word. */
  readonly references: readonly EnvironmentReference[];
}

export interface ConfigLine {
  /** 1-based line number. */
  readonly number: number;
  readonly words: readonly ConfigWord[];
  /** The line starts with `[` (a scope line; HAProxy does not split it into words). */
  readonly scope: boolean;
  /** Why HAProxy cannot read the line (it reports a fatal error and skips it). */
  readonly error?: string;
  /**
   * The words HAProxy counts on the line, when that is more than it reads (maxLineWords):
   * the line is then refused and skipped, and `error` says so too.
   */
  readonly tooManyWords?: number;
}

/** C `isspace()` in the C locale (HAProxy never calls setlocale). */
export function isConfigSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d);
}

const isAlpha = (char: string): boolean => /^[A-Za-z]$/.test(char);
const isNameChar = (char: string): boolean => /^[A-Za-z0-9_]$/.test(char);
const isHex = (char: string): boolean => /^[0-9A-Fa-f]$/.test(char);
const internalVariables = new Set(['.LINE', '.FILE', '.SECTION']);

/** What one backslash sequence yields: the bytes emitted and how many characters it spans. */
function escapeSequence(
  line: string,
  at: number,
  inDoubleQuotes: boolean,
): { text: string; length: number } | { error: string } {
  const next = line.charAt(at + 1);
  switch (next) {
    case ' ':
    case '\\':
    case '#':
    case "'":
    case '"':
      return { text: next, length: 2 };
    case 't':
      return { text: '\t', length: 2 };
    case 'n':
      return { text: '\n', length: 2 };
    case 'r':
      return { text: '\r', length: 2 };
    case '$':
      return inDoubleQuotes ? { text: '$', length: 2 } : { text: '\\', length: 1 };
    case 'x': {
      const hex = line.slice(at + 2, at + 4);
      if (hex.length !== 2 || !isHex(hex.charAt(0)) || !isHex(hex.charAt(1))) {
        return { error: 'truncated or invalid hexadecimal sequence' };
      }
      return { text: String.fromCharCode(parseInt(hex, 16)), length: 4 };
    }
    default:
      return { text: '\\', length: 1 };
  }
}

/** One `$NAME` / `${...}` reference starting at the `$`. */
function environmentReference(
  line: string,
  at: number,
): { reference: EnvironmentReference; text: string; length: number } | { error: string } {
  let i = at + 1;
  const braces = line.charAt(i) === '{';
  if (braces) i += 1;
  const first = line.charAt(i);
  if (!isAlpha(first) && first !== '_' && first !== '.') {
    return { error: 'forbidden first char in environment variable name' };
  }
  const nameStart = i;
  if (first === '.') i += 1;
  while (isNameChar(line.charAt(i))) i += 1;
  const name = line.slice(nameStart, i);
  if (first === '.' && !internalVariables.has(name)) {
    return { error: 'forbidden first char in environment variable name' };
  }
  let expandsWords = false;
  if (braces && line.charAt(i) === '[') {
    if (line.slice(i, i + 3) !== '[*]') {
      return { error: 'truncated or invalid word expansion sequence' };
    }
    expandsWords = true;
    i += 3;
  }
  let text = '';
  let hasDefault = false;
  if (braces) {
    if (line.charAt(i) === '-') {
      const close = line.indexOf('}', i);
      // HAProxy reads the default up to the first `}`, quotes and spaces included.
      if (close === -1) return { error: 'unmatched brace in environment variable name' };
      text = line.slice(i + 1, close);
      hasDefault = true;
      i = close + 1;
    } else if (line.charAt(i) === '}') {
      i += 1;
    } else {
      return { error: 'unmatched brace in environment variable name' };
    }
  }
  const after = line.charAt(i);
  const followedByText = after !== '' && after !== '"' && after !== '$' && !/[\0\n\r]/.test(after);
  return {
    reference: { name, expandsWords, hasDefault, followedByText },
    text,
    length: i - at,
  };
}

interface WordDraft {
  text: string;
  references: EnvironmentReference[];
}

/** Splits one line (without its LF) into words. */
export function splitConfigLine(line: string): Omit<ConfigLine, 'number'> {
  let i = 0;
  /** Runs of unquoted spaces after the leading ones: each starts one more word for HAProxy. */
  let separators = 0;
  while (i < line.length && isConfigSpace(line.charCodeAt(i))) i += 1;
  if (line.charAt(i) === '[') return { words: [], scope: true };
  const words: ConfigWord[] = [];
  let word: WordDraft | undefined;
  let singleQuoted = false;
  let doubleQuoted = false;
  const current = (): WordDraft => (word ??= { text: '', references: [] });
  const failed = (error: string): Omit<ConfigLine, 'number'> => ({ words, scope: false, error });
  while (i < line.length) {
    const char = line.charAt(i);
    const code = line.charCodeAt(i);
    if (code === 0 || char === '\n' || char === '\r') break;
    if (char === '#' && !singleQuoted && !doubleQuoted) break;
    if (char === '"' && !singleQuoted) {
      current();
      doubleQuoted = !doubleQuoted;
      i += 1;
    } else if (char === "'" && !doubleQuoted) {
      current();
      singleQuoted = !singleQuoted;
      i += 1;
    } else if (char === '\\' && !singleQuoted) {
      const escape = escapeSequence(line, i, doubleQuoted);
      if ('error' in escape) return failed(escape.error);
      current().text += escape.text;
      i += escape.length;
    } else if (isConfigSpace(code) && !singleQuoted && !doubleQuoted) {
      while (i < line.length && isConfigSpace(line.charCodeAt(i))) i += 1;
      separators += 1;
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === '$' && doubleQuoted) {
      const found = environmentReference(line, i);
      if ('error' in found) return failed(found.error);
      const draft = current();
      draft.text += found.text;
      draft.references.push(found.reference);
      i += found.length;
    } else {
      current().text += char;
      i += 1;
    }
  }
  if (singleQuoted || doubleQuoted) return failed('unmatched quote');
  if (word !== undefined) words.push(word);
  // HAProxy reports the errors above first, then this one (readcfgfile's order).
  const counted = separators + 1;
  if (counted > maxLineWords) {
    return {
      words,
      scope: false,
      error: `too many words (${counted}, at most ${maxLineWords})`,
      tooManyWords: counted,
    };
  }
  return { words, scope: false };
}

/** Every line of a configuration that holds words, a scope or an error. */
export function splitConfig(config: string): ConfigLine[] {
  const lines: ConfigLine[] = [];
  config.split('\n').forEach((text, index) => {
    const line = splitConfigLine(text);
    if (line.words.length > 0 || line.scope || line.error !== undefined) {
      lines.push({ number: index + 1, ...line });
    }
  });
  return lines;
}
