/**
 * Rules for one keyword line inside a section: the keyword (after `no` / `default`) must be
 * on the section's allow-list, and so must what it selects: the option, the rule action, the
 * bind and server settings (walked with HAProxy's own value counts, so a value is never read
 * as a setting or the other way round), the mode, the stats setting, the filter, the service;
 * addresses must be IP addresses or host names, and IP addresses where HAProxy would resolve a
 * name while the configuration is checked (hostNameProblem).
 */
import type { ConfigLine, ConfigWord } from './config-words.ts';
import {
  type Arity,
  type SectionKind,
  bindSettings,
  entryOf,
  fileParenthesisActions,
  filterKinds,
  logTargets,
  parenthesisActions,
  prefixableKeywords,
  proxyModes,
  proxyOptions,
  ruleActions,
  ruleContexts,
  ruleDelays,
  sectionKeywords,
  serverSettings,
  services,
  statsSettings,
  timeoutNames,
} from './keywords.ts';
import { type LintFinding, haproxyLintReasons as reasons, lintFinding } from './lint-finding.ts';
import { refusedKeywordReasons } from './refused-keywords.ts';
import { templateCountFinding } from './server-count.ts';
import { addressProblem, hostNameProblem, isInDirectoryPath, literal } from './word-rules.ts';

type Refuse = (directive: string, what: string) => LintFinding;

/** The refusal for a word that is not on a list (or comes from the environment). */
function unlisted(line: ConfigLine, context: string, word: ConfigWord | undefined): LintFinding {
  const text = word?.text ?? '';
  const references = word?.references.map((reference) => `\${${reference.name}}`) ?? [];
  const shown = `${references.join('')}${text}`;
  const directive = context === '' ? shown : `${context} ${shown}`;
  if (word !== undefined && word.references.length > 0) {
    return lintFinding(
      line.number,
      directive,
      reasons.KeywordFromEnvironment,
      'comes from an environment variable, so its meaning is unknown until HAProxy runs',
      'write keywords, options, actions and settings literally',
    );
  }
  const why = entryOf(refusedKeywordReasons, text);
  return lintFinding(
    line.number,
    directive,
    reasons.KeywordNotAllowed,
    why === undefined
      ? 'is not on the list of what haptic allows here'
      : `is not allowed: it ${why}`,
    why === undefined
      ? 'remove it from the template, or ask for it to be added to the allow-list if a template needs it'
      : 'remove it from the template',
  );
}

/** Directives whose address may name a host: HAProxy resolves it later, not while parsing. */
const namesResolvedLater: ReadonlySet<string> = new Set(['server', 'server-template']);

function addressFinding(line: ConfigLine, directive: string, word: ConfigWord | undefined) {
  if (word === undefined) return undefined;
  const namesAllowed = namesResolvedLater.has(directive);
  const problem = addressProblem(word) ?? (namesAllowed ? undefined : hostNameProblem(word));
  if (problem === undefined) return undefined;
  return lintFinding(
    line.number,
    `${directive} ${word.text}`,
    reasons.AddressNotAllowed,
    problem,
    namesAllowed
      ? 'use an IP address or host name with a port, such as 10.0.0.1:80'
      : 'use an IP address with a port, such as "${HAPTIC_LISTEN_ADDRESS}:8080" or 10.0.0.1:514',
  );
}

/** Walks `setting [value]...` pairs with HAProxy's value counts. */
function settingsFinding(
  line: ConfigLine,
  keyword: string,
  words: readonly ConfigWord[],
  from: number,
  arity: Arity,
): LintFinding | undefined {
  for (let index = from; index < words.length;) {
    const word = words[index];
    const name = literal(word);
    const count = name === undefined ? undefined : entryOf(arity, name);
    if (name === undefined || count === undefined) {
      return unlisted(line, keyword, word);
    }
    if (name === 'addr' || name === 'agent-addr') {
      const found = addressFinding(line, `${keyword} ${name}`, words[index + 1]);
      if (found !== undefined) return found;
    }
    index += 1 + count;
  }
  return undefined;
}

/** `name` or `name(argument)` of a rule action, with the argument checked for pattern files. */
function actionFinding(
  line: ConfigLine,
  keyword: string,
  word: ConfigWord | undefined,
  next: ConfigWord | undefined,
): LintFinding | undefined {
  const text = literal(word);
  const allowed = entryOf(ruleActions, keyword);
  if (text === undefined || allowed === undefined) return unlisted(line, keyword, word);
  const open = text.indexOf('(');
  const name = open === -1 ? text : text.slice(0, open);
  const argument = open === -1 ? undefined : text.slice(open + 1, -1);
  const wellFormed = open === -1 || (text.endsWith(')') && parenthesisActions.has(name));
  if (!wellFormed || !allowed.has(name)) return unlisted(line, keyword, word);
  if (argument !== undefined && fileParenthesisActions.has(name) && !isInDirectoryPath(argument)) {
    return lintFinding(
      line.number,
      `${keyword} ${text}`,
      reasons.FileOutsideDirectory,
      'names a pattern file outside the configuration directory',
      'use the relative path of a map or ACL file the configuration loads',
    );
  }
  if (name === 'use-service' && !services.has(literal(next) ?? '')) {
    return unlisted(line, `${keyword} use-service`, next);
  }
  return undefined;
}

/** `http-request <action>`, `tcp-request content <action>`, `tcp-request inspect-delay <t>`. */
function ruleFinding(line: ConfigLine, keyword: string, words: readonly ConfigWord[]) {
  const contexts = entryOf(ruleContexts, keyword);
  const second = literal(words[1]);
  if (contexts === undefined) return actionFinding(line, keyword, words[1], words[2]);
  if (second !== undefined && second === entryOf(ruleDelays, keyword)) return undefined;
  if (second === undefined || !contexts.has(second)) return unlisted(line, keyword, words[1]);
  return actionFinding(line, keyword, words[2], words[3]);
}

/** A value that must be on a list (`option <name>`, `mode <mode>`, ...). */
function listedValue(
  line: ConfigLine,
  keyword: string,
  word: ConfigWord | undefined,
  list: ReadonlySet<string>,
) {
  const text = literal(word);
  return text !== undefined && list.has(text) ? undefined : unlisted(line, keyword, word);
}

/** What a keyword's own arguments must satisfy, per keyword. */
function argumentsFinding(
  line: ConfigLine,
  kind: SectionKind,
  keyword: string,
  words: readonly ConfigWord[],
): LintFinding | undefined {
  const refuse: Refuse = (directive, what) =>
    lintFinding(
      line.number,
      directive,
      reasons.KeywordNotAllowed,
      what,
      'remove it from the template',
    );
  switch (keyword) {
    case 'default-path':
      return literal(words[1]) === 'config' && words.length === 2
        ? undefined
        : refuse(
            `default-path ${words[1]?.text ?? ''}`,
            'must be "default-path config", so relative paths stay in the configuration directory',
          );
    case 'option':
      return listedValue(line, 'option', words[1], proxyOptions);
    case 'mode':
      return listedValue(line, 'mode', words[1], proxyModes);
    case 'timeout':
      return listedValue(line, 'timeout', words[1], timeoutNames);
    case 'filter':
      return listedValue(line, 'filter', words[1], filterKinds);
    case 'stats':
      if (literal(words[1]) === 'socket') {
        return refuse(
          'stats socket',
          "is not allowed: it opens HAProxy's management interface (the chart's master socket is the only one)",
        );
      }
      if (literal(words[1]) === 'http-request') {
        return listedValue(
          line,
          'stats http-request',
          words[2],
          new Set(['allow', 'deny', 'auth']),
        );
      }
      return listedValue(
        line,
        'stats',
        words[1],
        kind === 'global' ? statsSettings.global : statsSettings.proxy,
      );
    case 'log': {
      const target = literal(words[1]);
      if (target !== undefined && logTargets.has(target)) return undefined;
      return addressFinding(line, 'log', words[1]);
    }
    case 'bind':
      return (
        addressFinding(line, 'bind', words[1]) ??
        settingsFinding(line, 'bind', words, 2, bindSettings)
      );
    case 'server':
      return (
        addressFinding(line, 'server', words[2]) ??
        settingsFinding(line, 'server', words, 3, serverSettings)
      );
    case 'server-template':
      return (
        templateCountFinding(line.number, words[2]) ??
        addressFinding(line, 'server-template', words[3]) ??
        settingsFinding(line, 'server-template', words, 4, serverSettings)
      );
    case 'default-server':
      return settingsFinding(line, 'default-server', words, 1, serverSettings);
    case 'nameserver':
      return addressFinding(line, 'nameserver', words[2]);
    default:
      return entryOf(ruleActions, keyword) === undefined
        ? undefined
        : ruleFinding(line, keyword, words);
  }
}

/** The refusal for a keyword line in a section of `kind`, or undefined when it is allowed. */
export function keywordFinding(
  line: ConfigLine,
  kind: SectionKind | undefined,
): LintFinding | undefined {
  const [first] = line.words;
  const prefix = literal(first);
  const prefixed = prefix === 'no' || prefix === 'default';
  const words = prefixed ? line.words.slice(1) : line.words;
  const keyword = literal(words[0]);
  if (kind === undefined || keyword === undefined || !sectionKeywords[kind].has(keyword)) {
    const context = prefixed ? prefix : '';
    if (kind === undefined && keyword !== undefined && words[0] !== undefined) {
      return lintFinding(
        line.number,
        keyword,
        reasons.KeywordNotAllowed,
        'is outside any section haptic allows',
        'start a global, defaults, frontend, backend or listen section first',
      );
    }
    return unlisted(line, context, words[0]);
  }
  if (prefixed && (kind !== 'proxy' || !prefixableKeywords.has(keyword))) {
    return lintFinding(
      line.number,
      `${prefix} ${keyword}`,
      reasons.KeywordNotAllowed,
      'puts "no" or "default" before a keyword other than option or log (HAProxy still runs the keyword before it refuses the line)',
      'remove the prefix or the line',
    );
  }
  return argumentsFinding(line, kind, keyword, words);
}
