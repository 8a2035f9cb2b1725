/**
 * The rendered HAProxy configuration is hostile input: anything taken from a Kubernetes
 * object may end up in it, and `haproxy -c` already runs Lua, loads engines and opens files
 * while it parses. So before HAProxy sees a configuration (check or reload), controller and
 * agent read it word by word exactly as HAProxy will (config-words.ts) and accept it
 * only when every section, keyword, option, action and setting is on the allow-list
 * (keywords.ts), every file it names stays in the configuration's directory, and it
 * reads no environment beyond the allow-listed variables. Lines inside `.if` blocks are
 * checked as if they ran; sections may not start inside them, so the section each line
 * belongs to is certain.
 */
import { type ConfigLine, splitConfigLine } from './config-words.ts';
import { keywordFinding } from './directive-rules.ts';
import {
  type SectionKind,
  conditionalMacros,
  entryOf,
  otherSections,
  sectionKinds,
} from './keywords.ts';
import { type LintFinding, haproxyLintReasons as reasons, lintFinding } from './lint-finding.ts';
import { refusedKeywordReasons } from './refused-keywords.ts';
import { type DeclaredServers, ServerTally, declaredServers } from './server-count.ts';
import { wordLimitFinding } from './word-limit.ts';
import { addressProblem, literal, wordFinding } from './word-rules.ts';

export { type LintFinding, haproxyLintReasons } from './lint-finding.ts';

export interface ConfigInspection {
  /** The refused lines, in line order; empty when the configuration may be loaded. */
  readonly findings: readonly LintFinding[];
  /** Names of the backends it declares (`backend` and `listen` sections), for verification. */
  readonly backends: readonly string[];
  /** Relative paths of the crt-list files its `bind` lines load; lint them with inspectCrtList. */
  readonly crtLists: readonly string[];
}

export interface WalkState {
  /** The section the line is in: an allowed kind, `refused`, or undefined before any. */
  section: SectionKind | 'refused' | undefined;
  /** Depth of `.if` blocks. */
  depth: number;
  /** `default-path config` was read in the global section, outside `.if` blocks. */
  pathsAnchored: boolean;
}

function sectionFinding(line: ConfigLine, name: string, kind: SectionKind, state: WalkState) {
  if (state.depth > 0) {
    return lintFinding(
      line.number,
      name,
      reasons.SectionInConditional,
      'starts a section inside an .if block',
      'keep .if blocks inside a section, so every line belongs to a known section',
    );
  }
  const [, , third, fourth] = line.words;
  if (kind !== 'proxy' || third === undefined) return undefined;
  if (literal(third) === 'from' && fourth !== undefined) return undefined;
  const problem = addressProblem(third);
  if (problem === undefined) return undefined;
  return lintFinding(
    line.number,
    `${name} ${third.text}`,
    reasons.AddressNotAllowed,
    problem,
    'use a bind line with an IP address or host name and port',
  );
}

/** The first rule the line breaks, updating the walk's section, depth and anchoring. */
function lineFinding(line: ConfigLine, state: WalkState): LintFinding | undefined {
  const wordLimit = wordLimitFinding(line);
  if (wordLimit !== undefined) return wordLimit;
  if (line.error !== undefined) {
    return lintFinding(
      line.number,
      line.words[0]?.text ?? '',
      reasons.LineUnreadable,
      `cannot be read by HAProxy (${line.error})`,
      'fix the quoting or escaping of the line',
    );
  }
  if (line.scope) {
    return lintFinding(line.number, '[', reasons.ScopeLine, 'starts a scope line', 'remove it');
  }
  const words = wordFinding(line, { pathsAnchored: state.pathsAnchored });
  if (words !== undefined) return words;
  const name = literal(line.words[0]);
  if (name !== undefined && conditionalMacros.has(name)) {
    if (name === '.if') state.depth += 1;
    if (name === '.endif') state.depth = Math.max(0, state.depth - 1);
    return undefined;
  }
  const kind = name === undefined ? undefined : entryOf(sectionKinds, name);
  if (name !== undefined && kind !== undefined) {
    state.section = kind;
    return sectionFinding(line, name, kind, state);
  }
  if (name !== undefined && otherSections.has(name)) {
    state.section = 'refused';
    const why = entryOf(refusedKeywordReasons, name) ?? 'is not a section haptic allows';
    return lintFinding(
      line.number,
      name,
      reasons.KeywordNotAllowed,
      `is not allowed: it ${why}`,
      'remove the section from the template',
    );
  }
  if (state.section === 'refused') {
    return lintFinding(
      line.number,
      line.words[0]?.text ?? '',
      reasons.KeywordNotAllowed,
      'is inside a section haptic does not allow',
      'remove the section from the template',
    );
  }
  const found = keywordFinding(line, state.section);
  if (found === undefined && name === 'default-path' && state.depth === 0) {
    state.pathsAnchored = true;
  }
  return found;
}

/** Reads a configuration once: its refused lines, its backends and its crt-lists. */
export function inspectHaproxyConfig(config: string, lines?: LintLines): ConfigInspection {
  if (config.includes('\0')) {
    const line = config.slice(0, config.indexOf('\0')).split('\n').length;
    return {
      findings: [
        lintFinding(
          line,
          'NUL',
          reasons.NulByte,
          'is a NUL byte; HAProxy configurations are text',
          'remove it',
        ),
      ],
      backends: [],
      crtLists: [],
    };
  }
  const findings: LintFinding[] = [];
  const backends: string[] = [];
  const crtLists: string[] = [];
  const servers = new ServerTally();
  let state: WalkState = { section: undefined, depth: 0, pathsAnchored: false };
  const texts = config.split('\n');
  for (const [index, text] of texts.entries()) {
    let read = lines?.get(state, text);
    if (read === undefined) {
      read = readLine(text, state);
      lines?.set(state, text, read);
    }
    state = read.after;
    const number = index + 1;
    if (read.finding !== undefined) {
      findings.push({
        ...read.finding,
        line: number,
        message: read.finding.message.replace(/^line 0: /, `line ${number}: `),
      });
    }
    // Counted here, not in the reading: a line's share of the bounds depends on the lines before.
    if (read.opensSection) servers.openSection();
    const tooMany = read.servers === undefined ? undefined : servers.add(number, read.servers);
    if (tooMany !== undefined) findings.push(tooMany);
    if (read.backend !== undefined) backends.push(read.backend);
    if (read.crtLists.length > 0) crtLists.push(...read.crtLists);
  }
  lines?.next();
  return { findings, backends, crtLists };
}

/** What one line of text contributes, read in `state`; its finding says line 0. */
export interface LineReading {
  readonly after: Readonly<WalkState>;
  readonly finding: LintFinding | undefined;
  readonly backend: string | undefined;
  readonly crtLists: readonly string[];
  /** The line starts a section (allowed or not). */
  readonly opensSection: boolean;
  /** The servers it declares (`server`, `server-template`), when it is allowed. */
  readonly servers: DeclaredServers | undefined;
}

function readLine(text: string, before: Readonly<WalkState>): LineReading {
  const split = splitConfigLine(text);
  const state = { ...before };
  const blank = { backend: undefined, crtLists: [], opensSection: false, servers: undefined };
  if (split.words.length === 0 && !split.scope && split.error === undefined) {
    return { ...blank, after: before, finding: undefined };
  }
  const line: ConfigLine = { number: 0, ...split };
  const first = literal(line.words[0]);
  const opensSection =
    first !== undefined && (entryOf(sectionKinds, first) !== undefined || otherSections.has(first));
  const finding = lineFinding(line, state);
  if (finding !== undefined) return { ...blank, after: state, finding, opensSection };
  const [keyword, name] = line.words;
  const crtLists: string[] = [];
  if (keyword?.text === 'bind') {
    line.words.forEach((word, index) => {
      const next = line.words[index + 1];
      if (word.text === 'crt-list' && next !== undefined) crtLists.push(next.text);
    });
  }
  const declares = keyword?.text === 'backend' || keyword?.text === 'listen';
  return {
    after: state,
    finding: undefined,
    backend: declares && name !== undefined ? name.text : undefined,
    crtLists,
    opensSection,
    servers: declaredServers(line.words),
  };
}

/**
 * Readings of lines kept between inspections (lint-lines.ts): a line's reading is a
 * function of its text and the walk's state before it, so a configuration that differs from
 * the last one in a few lines is tokenized and checked in those lines only.
 */
export interface LintLines {
  get(state: Readonly<WalkState>, text: string): LineReading | undefined;
  set(state: Readonly<WalkState>, text: string, reading: LineReading): void;
  /** One inspection ended: readings not used in it or the one before may be dropped. */
  next(): void;
}
