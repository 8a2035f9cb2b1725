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

/** Splits one line into words. */
export function splitConfigLine(line: string): ConfigWord[] {
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
  return words;
}

/** The non-empty lines of a configuration, split into words. */
export function splitConfig(config: string): ConfigLine[] {
  return config
    .split('\n')
    .map((line, index) => ({ number: index + 1, words: splitConfigLine(line) }))
    .filter((line) => line.words.length > 0);
}
