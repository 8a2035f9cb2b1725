/**
 * A crt-list file (`bind ... crt-list <file>`) is parsed by HAProxy too: each line names a
 * certificate, optional TLS settings in `[...]` and SNI filters. HAProxy splits its lines on
 * C `isspace()` bytes and on `[` / `]`, and skips lines whose first byte is `#`, CR or LF
 * (crtlist_parse_file, crtlist_parse_line). The certificate and every file setting must stay
 * in the configuration's directory, and only the settings of the allow-list may appear.
 */
import { isConfigSpace } from './config-words.ts';
import { crtListSettings, entryOf, fileArgumentWords } from './keywords.ts';
import { type LintFinding, haproxyLintReasons as reasons, lintFinding } from './lint-finding.ts';
import { isInDirectoryPath } from './word-rules.ts';

interface CrtListLine {
  readonly words: readonly string[];
  /** Index of the first word inside `[`, and of the first after `]` (both 0 without). */
  readonly settingsFrom: number;
  readonly settingsTo: number;
}

function splitCrtListLine(line: string): CrtListLine {
  const words: string[] = [];
  let word: string | undefined;
  let settingsFrom = 0;
  let settingsTo = 0;
  for (const char of line) {
    const code = char.charCodeAt(0);
    if (isConfigSpace(code) || char === '[' || char === ']') {
      if (word !== undefined) words.push(word);
      word = undefined;
      if (char === '[') settingsFrom = words.length;
      if (char === ']') settingsTo = words.length;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (word !== undefined) words.push(word);
  return { words, settingsFrom, settingsTo };
}

function lineFinding(number: number, line: CrtListLine): LintFinding | undefined {
  const [certificate] = line.words;
  if (certificate === undefined) return undefined;
  const outside = (directive: string): LintFinding =>
    lintFinding(
      number,
      directive,
      reasons.FileOutsideDirectory,
      'names a file outside the configuration directory',
      'use a relative path without ".." (ssl/site.pem) and deliver the file with the configuration',
    );
  if (!isInDirectoryPath(certificate)) return outside(certificate);
  for (let index = line.settingsFrom; index < line.settingsTo;) {
    const name = line.words[index] ?? '';
    const count = entryOf(crtListSettings, name);
    if (count === undefined) {
      return lintFinding(
        number,
        name,
        reasons.KeywordNotAllowed,
        'is not on the list of crt-list settings haptic allows',
        'remove it from the crt-list template',
      );
    }
    const value = line.words[index + 1] ?? '';
    if (fileArgumentWords.has(name) && !isInDirectoryPath(value))
      return outside(`${name} ${value}`);
    index += 1 + count;
  }
  return undefined;
}

/** An encapsulation boundary of PEM data (RFC 7468), where HAProxy would read words. */
const pemBoundary = /^[\t\v\f\r ]*-----BEGIN /m;

/**
 * The refused lines of a crt-list file, in line order. A file of PEM data (`crt-list
 * ssl/site.pem`, a certificate and its key) is refused as a whole, and its words are never
 * quoted: a finding reaches logs, Events and admission answers, and a key's lines would too.
 */
export function inspectCrtList(content: string): readonly LintFinding[] {
  if (content.includes('\0')) {
    const line = content.slice(0, content.indexOf('\0')).split('\n').length;
    return [lintFinding(line, 'NUL', reasons.NulByte, 'is a NUL byte', 'remove it')];
  }
  const pem = pemBoundary.exec(content);
  if (pem !== null) {
    const line = content.slice(0, pem.index + pem[0].length).split('\n').length;
    return [
      lintFinding(
        line,
        '-----BEGIN',
        reasons.PemInCrtList,
        'starts PEM data (a certificate or a private key), not a crt-list line',
        'name the certificate after crt, or a crt-list file whose lines name certificates, after crt-list',
      ),
    ];
  }
  const findings: LintFinding[] = [];
  content.split('\n').forEach((text, index) => {
    if (text.startsWith('#') || text.startsWith('\r') || text === '') return;
    const found = lineFinding(index + 1, splitCrtListLine(text));
    if (found !== undefined) findings.push(found);
  });
  return findings;
}
