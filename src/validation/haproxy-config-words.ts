/**
 * HAProxy's own way of splitting a configuration line into words (`parse_line()`): `#`
 * starts a comment outside quotes, single quotes are literal, double quotes allow escapes and
 * environment variables (`$NAME`, `${NAME}`), and a backslash escapes the next character
 * (`\xHH` a byte). The lint and the backend list read keywords exactly as HAProxy will, so
 * quoting or escaping cannot hide a directive.
 */

export interface ConfigWord {
  /** The word after quotes and escapes are removed; environment variables left as written. */
  readonly text: string;
  /** The word contains an environment variable, so its final text is unknown until HAProxy runs. */
  readonly fromEnvironment: boolean;
}

export interface ConfigLine {
  /** 1-based line number. */
  readonly number: number;
  readonly words: readonly ConfigWord[];
}

const escapes: Readonly<Record<string, string>> = { r: '\r', n: '\n', t: '\t' };

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 13 || code === 10;
}

/**
 * The first `limit` words of a line without quotes or escapes (the common case), or
 * undefined when the line has any: then the full parser below decides.
 */
function plainWords(line: string, limit: number): ConfigWord[] | undefined {
  const words: ConfigWord[] = [];
  let start = -1;
  for (let i = 0; i <= line.length; i += 1) {
    const code = i < line.length ? line.charCodeAt(i) : 32;
    if (code === 34 || code === 39 || code === 92) return undefined; // " ' \
    const end = code === 35 || isSpace(code); // # or whitespace
    if (end && start !== -1) {
      words.push({ text: line.slice(start, i), fromEnvironment: false });
      start = -1;
      if (words.length === limit) return words;
    } else if (!end && start === -1) {
      start = i;
    }
    if (code === 35) return words;
  }
  return words;
}

/** Splits one line into words (at most `limit` of them). */
export function splitConfigLine(line: string, limit = Infinity): ConfigWord[] {
  const plain = plainWords(line, limit);
  if (plain !== undefined) return plain;
  const words: ConfigWord[] = [];
  let text = '';
  let fromEnvironment = false;
  let inWord = false;
  let quote: '"' | "'" | undefined;
  const finish = (): void => {
    if (inWord) words.push({ text, fromEnvironment });
    text = '';
    fromEnvironment = false;
    inWord = false;
  };
  for (let i = 0; i < line.length; i += 1) {
    const char = line.charAt(i);
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else text += char;
      continue;
    }
    if (char === '\\' && i + 1 < line.length) {
      const next = line.charAt(i + 1);
      inWord = true;
      if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(line.slice(i + 2, i + 4))) {
        text += String.fromCharCode(parseInt(line.slice(i + 2, i + 4), 16));
        i += 3;
      } else {
        text += escapes[next] ?? next;
        i += 1;
      }
      continue;
    }
    if (quote === '"') {
      if (char === '"') quote = undefined;
      else {
        if (char === '$') fromEnvironment = true;
        text += char;
      }
      continue;
    }
    if (char === '#') break;
    if (char === ' ' || char === '\t' || char === '\r' || char === '\n') {
      finish();
      continue;
    }
    inWord = true;
    if (char === '"' || char === "'") quote = char;
    else text += char;
  }
  finish();
  return words.slice(0, limit);
}

/** The non-empty lines of a configuration, each split into at most `limit` words. */
export function splitConfig(config: string, limit = Infinity): ConfigLine[] {
  const lines: ConfigLine[] = [];
  config.split('\n').forEach((line, index) => {
    const words = splitConfigLine(line, limit);
    if (words.length > 0) lines.push({ number: index + 1, words });
  });
  return lines;
}
