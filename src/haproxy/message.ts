/**
 * HAProxy's `haproxy -c` output quotes what it read: the first line of a bad `-f` pattern
 * file, a map entry, an error file's offending header. None of that may reach a status, an
 * Event, a log or an admission answer. So its output is reduced to lines of one shape,
 *
 *   [ALERT] haproxy.cfg:12: 'balance' names a load-balancing algorithm HAProxy does not support
 *
 * built only from: the severity, the line number HAProxy reports, the keyword on that line of
 * the configuration (read by our own tokenizer from the configuration, not from HAProxy's
 * text), and a reason chosen from a fixed list by matching HAProxy's wording. Nothing of
 * HAProxy's text is copied. Reducing a reduced message gives the same message.
 */
import { basename } from 'node:path';
import { type ConfigWord, splitConfig } from './config-words.ts';
import { isInDirectoryPath } from './word-rules.ts';

/** HAProxy's wordings (2.6 to 3.2) and the reason each one is reported as; first match wins. */
const located: readonly (readonly [RegExp, string])[] = [
  [/out of memory|cannot allocate memory/i, 'ran out of memory within the check limits'],
  [/unknown keyword .* out of section/, 'is outside any section'],
  [/unknown keyword/, 'is not a keyword HAProxy knows in this section'],
  [
    /negation\/default currently supported/,
    "puts 'no' or 'default' before a keyword other than option or log",
  ],
  [/unknown proxy mode|unknown mode/, 'names a mode HAProxy does not know (http or tcp)'],
  [/balance only supports|'balance'/, 'names a load-balancing algorithm HAProxy does not support'],
  [/'hash-type'/, 'names a hash type HAProxy does not support'],
  [
    /could not resolve address/,
    'names a host that does not resolve (init-addr libc,none starts it disabled instead)',
  ],
  [/Missing LF on last line/, 'is the last line and does not end with a newline'],
  [
    /unmatched quote|unmatched brace|hexadecimal sequence|word expansion|environment variable name/,
    'cannot be read: check its quotes, escapes and variables',
  ],
  [
    /error detected while parsing ACL|ACL/,
    'has an invalid ACL: its criterion, flags, patterns or pattern file',
  ],
  [
    /converter/,
    'has an invalid converter or converter argument (such as a map file HAProxy cannot read)',
  ],
  [/fetch method|sample fetch|unknown fetch/, 'uses an unknown or invalid sample fetch'],
  [/certificate|private key|crt-list|PEM/i, 'cannot load a certificate, key or crt-list it names'],
  [/CA file|ca-file|CRL|crl-file|no CA file/i, 'cannot load a CA or CRL file it names'],
  [
    /error opening file|failed to open|unable to open|cannot open|No such file or directory|error reading file/i,
    'names a file HAProxy cannot read',
  ],
  [/errorfile|unable to parse headers/, 'names an error file that is not a valid HTTP response'],
  [
    /timeout|unexpected character|time value|delay/i,
    'has an invalid time value (a number with a unit, such as 5s)',
  ],
  [
    /log facility|log level|log format|^log\b|'log'/,
    'has an invalid log target, format, facility or level',
  ],
  [/status code/i, 'has an invalid HTTP status code'],
  [/not a supported algorithm/, 'names an algorithm HAProxy does not support'],
  [
    /invalid port|invalid address|cannot bind|Address already in use|empty address|port range|invalid IP/i,
    'has an invalid address or port',
  ],
  [
    /unable to find|not found|no such|does not exist|unknown (backend|table|proxy|server|resolvers|userlist|cache|section)/i,
    'refers to a backend, server, table or section that does not exist',
  ],
  [/already|duplicate|conflict/i, 'conflicts with an earlier definition (a duplicate name or id)'],
  [
    /unknown option|not a valid option|unsupported option/i,
    'names an option HAProxy does not know',
  ],
  [
    /expects|missing|requires|needs|expected|must be/i,
    'is missing an argument or has an argument of the wrong type',
  ],
  [/only supports|not supported|unsupported|invalid/i, 'has a value HAProxy does not support'],
  [/too many|too long|exceeds/i, 'is too long or has too many words'],
  [/ignored|has no effect|will never|not used/i, 'has no effect here and is ignored'],
];

/** HAProxy's messages without a line number that say something the user can act on. */
const unlocated: readonly (readonly [RegExp, string])[] = [
  [/unable to find required use_backend/, 'a use_backend rule names a backend that does not exist'],
  [
    /unable to find required default_backend|default_backend/,
    'default_backend names a backend that does not exist',
  ],
  [
    /verify is enabled by default but no CA file/,
    "a server uses TLS without a ca-file; set ca-file, or 'verify none'",
  ],
  [
    /Cannot open configuration file|cannot open .*configuration/i,
    'HAProxy cannot open the configuration file',
  ],
  [
    /has no (frontend|backend|server)|no (bind|listen)/i,
    'a proxy lacks a bind line, a server or a backend it needs',
  ],
];

/** HAProxy's summary lines: they repeat what the located lines say. */
const summaries =
  /Error\(s\) found in configuration file|Fatal errors found in configuration|Failed to initialize server\(s\) addr|Configuration file is valid/;

const generic =
  'is invalid for HAProxy (its details are withheld because they may quote file contents)';
const genericFile =
  'HAProxy rejected the configuration (details withheld because they may quote file contents)';
const reasons = new Set(
  [...located, ...unlocated].map(([, reason]) => reason).concat(generic, genericFile),
);

const severity = /^\[(ALERT|WARNING)\]\s*(?:\(\d+\)\s*)?:?\s*(?:config\s*:\s*)?(.*)$/;
// HAProxy 2.6 prints a Lua error's location after a literal `(null)`.
const location = /^(?:\(null\))?(?:parsing\s*)?\[([^\]]*):(\d+)\]\s*:?\s*(.*)$/;
/** A line of a file the located line loads (a crt-list or map line). */
const nested = /line (\d+) (?:in|of) file '([^']+)'/;
const reduced =
  /^\[(ALERT|WARNING)\] ([A-Za-z0-9._/+-]+)(?::(\d+))?: (?:'([A-Za-z0-9._ ?-]*)' )?(.*?)(?: \(in ([A-Za-z0-9._/+-]+):\d+\))?$/;

/** Keywords whose next word is shown with them (`option httpchk`, `http-request return`). */
const qualifiedKeywords = new Set([
  'option',
  'timeout',
  'stats',
  'filter',
  'http-request',
  'http-response',
  'http-after-response',
  'http-check',
  'tcp-check',
]);

/** The keyword on a line as messages show it: `balance`, `no option httpclose`, `http-request return`. */
function keywordOf(words: readonly ConfigWord[]): string {
  const texts = words.map((word) => (word.references.length > 0 ? '?' : word.text));
  const prefix = texts[0] === 'no' || texts[0] === 'default' ? texts.slice(0, 1) : [];
  const [keyword = '', argument] = texts.slice(prefix.length);
  const action = argument?.split('(')[0];
  const qualified = qualifiedKeywords.has(keyword) && action !== undefined ? [action] : [];
  const shown = [...prefix, keyword, ...qualified].join(' ');
  return /^[A-Za-z0-9._ -]{1,60}$/.test(shown) ? shown : '?';
}

function reasonFor(
  table: readonly (readonly [RegExp, string])[],
  text: string,
): string | undefined {
  return table.find(([pattern]) => pattern.test(text))?.[1];
}

export interface ReduceOptions {
  /** The configuration HAProxy checked: keywords are read from it. */
  readonly config: string;
  /** Its file name as messages show it. @default haproxy.cfg */
  readonly fileName?: string;
}

/** HAProxy's output as `[ALERT] <file>:<line>: '<keyword>' <reason>` lines, nothing quoted. */
export function reduceHaproxyMessage(output: string, options: ReduceOptions): string {
  const fileName = options.fileName ?? 'haproxy.cfg';
  // Split only when a line of the configuration is named: a passing check names none.
  let lines: ReadonlyMap<number, readonly ConfigWord[]> | undefined;
  const wordsOf = (number: number): readonly ConfigWord[] | undefined => {
    lines ??= new Map(splitConfig(options.config).map((line) => [line.number, line.words]));
    return lines.get(number);
  };
  const kept: string[] = [];
  let alerts = 0;
  for (const raw of output.split('\n')) {
    const already = reduced.exec(raw.trimEnd());
    if (
      already !== null &&
      reasons.has(already[5] ?? '') &&
      (already[6] === undefined || isInDirectoryPath(already[6]))
    ) {
      kept.push(raw.trimEnd());
      continue;
    }
    const match = severity.exec(raw.trimEnd());
    if (match === null) continue;
    const [, level = 'ALERT', body = ''] = match;
    if (level === 'ALERT') alerts += 1;
    if (summaries.test(body)) continue;
    const at = location.exec(body);
    if (at === null) {
      const reason = reasonFor(unlocated, body);
      if (reason !== undefined) kept.push(`[${level}] ${fileName}: ${reason}`);
      continue;
    }
    const [, path = '', number = '0', text = ''] = at;
    const reason = reasonFor(located, text) ?? generic;
    if (basename(path) === basename(fileName)) {
      const words = wordsOf(Number(number));
      const keyword = words === undefined ? '?' : keywordOf(words);
      const [, innerLine, innerFile = ''] = nested.exec(text) ?? [];
      const inner =
        innerLine !== undefined && isInDirectoryPath(innerFile)
          ? ` (in ${innerFile}:${innerLine})`
          : '';
      kept.push(`[${level}] ${fileName}:${number}: '${keyword}' ${reason}${inner}`);
    } else {
      const shown = isInDirectoryPath(path) ? `${path}:${number}` : fileName;
      kept.push(`[${level}] ${shown}: ${reason}`);
    }
  }
  if (kept.length === 0 && alerts > 0) kept.push(`[ALERT] ${fileName}: ${genericFile}`);
  return [...new Set(kept)].join('\n');
}

/** One line of a reduced message. */
export interface ReducedAlert {
  readonly severity: 'ALERT' | 'WARNING';
  /** The file the line is in (haproxy.cfg, or a file of the configuration's directory). */
  readonly file: string;
  /** Undefined when HAProxy named no line. */
  readonly line?: number;
  /** The keyword of that line as messages show it (`bind`, `http-request return`). */
  readonly keyword?: string;
  readonly reason: string;
  /** The line of a file the located line loads (a crt-list or map line), when HAProxy named it. */
  readonly inner?: { readonly file: string; readonly line: number };
}

/** Reads the lines of a message reduceHaproxyMessage wrote; other lines are skipped. */
export function readReducedMessage(message: string): ReducedAlert[] {
  const alerts: ReducedAlert[] = [];
  for (const text of message.split('\n')) {
    const match = reduced.exec(text.trimEnd());
    if (match === null) continue;
    const [, level, file = '', line, keyword, reason = '', innerFile] = match;
    const innerLine = innerFile === undefined ? undefined : /:(\d+)\)$/.exec(text)?.[1];
    alerts.push({
      severity: level === 'WARNING' ? 'WARNING' : 'ALERT',
      file,
      reason,
      ...(line === undefined ? {} : { line: Number(line) }),
      ...(keyword === undefined ? {} : { keyword }),
      ...(innerFile === undefined || innerLine === undefined
        ? {}
        : { inner: { file: innerFile, line: Number(innerLine) } }),
    });
  }
  return alerts;
}
