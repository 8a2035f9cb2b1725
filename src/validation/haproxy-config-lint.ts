/**
 * The rendered HAProxy configuration is hostile input: anything taken from a Kubernetes
 * object may end up in it. Before HAProxy parses it (check or reload), the agent refuses the
 * directives that load or run code or change the environment code would run with: Lua,
 * OpenSSL engines and providers, external checks, `program` sections, the insecure fork and
 * setuid switches, and environment changes. A keyword that comes from an environment
 * variable is refused too, since its meaning is unknown until HAProxy runs.
 */
import { type ConfigLine, type ConfigWord, splitConfig } from './haproxy-config-words.ts';

export interface LintFinding {
  /** 1-based line number in haproxy.cfg. */
  readonly line: number;
  /** The directive as HAProxy reads it. */
  readonly directive: string;
  readonly message: string;
}

/** Keywords refused wherever they appear, with why. */
const forbiddenKeywords: Readonly<Record<string, string>> = {
  'lua-load': 'loads Lua code',
  'lua-load-per-thread': 'loads Lua code',
  'lua-prepend-path': 'changes where Lua code is loaded from',
  'ssl-engine': 'loads an OpenSSL engine (native code)',
  'ssl-provider': 'loads an OpenSSL provider (native code)',
  'ssl-provider-path': 'changes where OpenSSL providers are loaded from',
  'external-check': 'runs external programs as health checks',
  'insecure-fork-wanted': 'allows HAProxy to start programs',
  'insecure-setuid-wanted': 'allows HAProxy to run setuid programs',
  setenv: 'changes the environment of HAProxy and the programs it starts',
  presetenv: 'changes the environment of HAProxy and the programs it starts',
  resetenv: 'changes the environment of HAProxy and the programs it starts',
  unsetenv: 'changes the environment of HAProxy and the programs it starts',
};

/** Sections refused, with why. */
const forbiddenSections: Readonly<Record<string, string>> = {
  program: 'starts an external program from the master process',
};

/** Keywords that qualify the keyword after them (`no option ...`, `default option ...`). */
const prefixes = new Set(['no', 'default']);

function keywordWords(line: ConfigLine): { words: readonly ConfigWord[]; disables: boolean } {
  const [first, ...rest] = line.words;
  const prefix = first?.text.toLowerCase();
  if (prefix !== undefined && prefixes.has(prefix))
    return { words: rest, disables: prefix === 'no' };
  return { words: line.words, disables: false };
}

function lintLine(line: ConfigLine): LintFinding | undefined {
  const {
    words: [keyword, argument],
    disables,
  } = keywordWords(line);
  if (keyword === undefined) return undefined;
  const name = keyword.text.toLowerCase();
  const directive = argument === undefined ? keyword.text : `${keyword.text} ${argument.text}`;
  if (keyword.fromEnvironment || (name === 'option' && argument?.fromEnvironment === true)) {
    return {
      line: line.number,
      directive,
      message: `line ${line.number}: the keyword "${directive}" comes from an environment variable; write keywords literally.`,
    };
  }
  // `no option external-check` only switches a feature off.
  if (disables) return undefined;
  const why =
    forbiddenKeywords[name] ??
    forbiddenSections[name] ??
    (name.startsWith('lua-') ? 'configures Lua code' : undefined) ??
    (name === 'option' && argument?.text.toLowerCase() === 'external-check'
      ? forbiddenKeywords['external-check']
      : undefined);
  if (why === undefined) return undefined;
  return {
    line: line.number,
    directive,
    message: `line ${line.number}: "${directive}" ${why}, which the agent does not allow; remove it from the template.`,
  };
}

export interface ConfigInspection {
  /** The forbidden directives, in line order; empty when the configuration may be loaded. */
  readonly findings: readonly LintFinding[];
  /** Names of the backends it declares (`backend` and `listen` sections), for verification. */
  readonly backends: readonly string[];
}

/** Reads a configuration once: its forbidden directives and its backends. */
export function inspectHaproxyConfig(config: string): ConfigInspection {
  if (config.includes('\0')) {
    const line = config.slice(0, config.indexOf('\0')).split('\n').length;
    const message = 'haproxy.cfg contains a NUL byte; HAProxy configurations are text.';
    return { findings: [{ line, directive: 'NUL', message }], backends: [] };
  }
  const findings: LintFinding[] = [];
  const backends: string[] = [];
  // Keywords are the first word, or the second after `no` / `default`; then one argument.
  for (const line of splitConfig(config, 3)) {
    const finding = lintLine(line);
    if (finding !== undefined) findings.push(finding);
    const [keyword, name] = line.words;
    if ((keyword?.text === 'backend' || keyword?.text === 'listen') && name !== undefined) {
      backends.push(name.text);
    }
  }
  return { findings, backends };
}
