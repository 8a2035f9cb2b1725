/**
 * HAProxy skips a configuration line of more than 64 words ("too many words"), and 2.6 counts
 * a run of spaces at the end of the line, or before its comment, as one more word. The lint
 * reads such a line as HAProxy does (it is not there: the section and `.if` depth stay as they
 * were) and refuses it, saying why and what to do. Its boundary is checked against the real
 * `haproxy -c`, and the chart's default template, rendered from a large cluster, stays far
 * below the limit.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultTemplateConfig, snapshotOf } from '../../../bench/controller-fixture.ts';
import { assembleBundle, requestModel } from '../../../src/controller/render/render-bundle.ts';
import { readTemplateConfig } from '../../../src/api/template-config.ts';
import {
  createTemplateEngine,
  parseTemplates,
  renderTemplates,
  templateContext,
} from '../../../src/controller/render/template-engine.ts';
import {
  haproxyLintReasons as reasons,
  inspectHaproxyConfig,
} from '../../../src/haproxy/config-lint.ts';
import { splitConfig, splitConfigLine } from '../../../src/haproxy/config-words.ts';
import { maxLineWords } from '../../../src/haproxy/config-words.ts';

const head = `global
  default-path config
defaults
  mode http
  timeout client 5s
  timeout connect 5s
  timeout server 5s
frontend fe
  bind 127.0.0.1:8080
`;
/** Lines of `head` (the lines appended start on the next one). */
const headLines = head.split('\n').length - 1;

/** `acl a path /p0 /p1 ...`: `count` words. */
function aclLine(count: number, separator = ' '): string {
  const values = Array.from({ length: count - 3 }, (_, i) => `/p${i}`);
  return ['acl', 'a', 'path', ...values].join(separator);
}

describe('counting words as HAProxy 2.6 does', () => {
  it.each([
    ['64 words', aclLine(64), undefined],
    ['65 words', aclLine(65), 65],
    ['66 words', aclLine(66), 66],
    ['64 words and a space', `${aclLine(64)} `, 65],
    ['64 words and a tab', `${aclLine(64)}\t`, 65],
    ['64 words, a space and a comment', `${aclLine(64)} # note`, 65],
    ['64 words and a comment right after the last', `${aclLine(64)}# note`, undefined],
    ['64 words, a space and a CR', `${aclLine(64)} \r`, 65],
    ['64 words and a CR (it ends the line)', `${aclLine(64)}\r x y`, undefined],
    ['63 words and a space', `${aclLine(63)} `, undefined],
    ['64 words separated by runs of spaces and tabs', aclLine(64, ' \t  '), undefined],
    ['64 words and an empty quoted word', `${aclLine(64)} ""`, 65],
    ['63 words and an empty quoted word', `${aclLine(63)} ""`, undefined],
    ['64 words, one quoted with spaces inside', `${aclLine(63)} "/a b c"`, undefined],
    ['64 words, one with escaped spaces', `${aclLine(63)} /a\\ b\\ c`, undefined],
    ['leading spaces are not a word', `   \t${aclLine(64)}`, undefined],
  ])('%s', (_name, line, counted) => {
    const split = splitConfigLine(line);
    expect(split.tooManyWords).toBe(counted);
    expect(split.error !== undefined).toBe(counted !== undefined);
  });

  it('reports a quoting error before the word count, as HAProxy does', () => {
    const split = splitConfigLine(`${aclLine(70)} "open`);
    expect(split.error).toBe('unmatched quote');
    expect(split.tooManyWords).toBeUndefined();
  });
});

describe('the lint and the word limit', () => {
  const findings = (lines: string) => inspectHaproxyConfig(`${head}${lines}\n`).findings;

  it('refuses a line of more than 64 words, saying why and what to do', () => {
    expect(findings(`  ${aclLine(65)}`)).toEqual([
      {
        line: headLines + 1,
        directive: 'acl',
        reason: reasons.TooManyWords,
        message: `line ${headLines + 1}: "acl" has 65 words, more than the 64 HAProxy reads on one line, so it reports "too many words" and skips the whole line; split it into lines of at most 64 words (repeat the acl, or the rule, for the rest of the values), or move long lists of values into a file read with -f.`,
      },
    ]);
  });

  it('refuses 64 words followed by spaces, naming the spaces', () => {
    expect(findings(`  ${aclLine(64)}  # values`).map((finding) => finding.message)).toEqual([
      `line ${headLines + 1}: "acl" has 64 words and then spaces before the end of the line or its comment, which HAProxy 2.6 counts as word 65: more than the 64 it reads on one line, so it reports "too many words" and skips the whole line; remove the spaces at the end of the line (and before its comment), or split the line.`,
    ]);
  });

  it('accepts 64 words', () => {
    expect(findings(`  ${aclLine(64)}`)).toEqual([]);
  });

  it('reads the lines after a skipped section line in the section HAProxy is in', () => {
    // HAProxy skips the backend line, so the bind line after it is still the frontend's.
    const backend = ['backend', 'b', ...Array.from({ length: 63 }, (_, i) => `w${i}`)].join(' ');
    expect(findings(`${backend}\n  bind 127.0.0.1:8081`).map((f) => f.reason)).toEqual([
      reasons.TooManyWords,
    ]);
  });

  it('refuses an overlong line inside an .if block too (HAProxy counts before it skips)', () => {
    expect(findings(`.if 0\n  ${aclLine(65)}\n.endif`).map((f) => f.reason)).toEqual([
      reasons.TooManyWords,
    ]);
  });
});

describe('the lint refuses exactly the lines haproxy -c refuses for their words', () => {
  const dir = mkdtempSync(join(tmpdir(), 'haptic-word-limit-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const suffixes = [
    '',
    ' ',
    '\t',
    '\v',
    '\f',
    '  \t ',
    ' # note',
    '# note',
    ' \r',
    '\r',
    ' ""',
    '""',
    '\\ ',
    ' \\ ',
    ' "/q r"',
  ];
  const variants = [62, 63, 64, 65, 66].flatMap((count) =>
    suffixes.flatMap((suffix) => [
      `  ${aclLine(count)}${suffix}`,
      `  ${aclLine(count, ' \t ')}${suffix}`,
    ]),
  );

  /** The lines `haproxy -c` reports "too many words" for, and its other alerts about lines. */
  function haproxyRefuses(config: string): { lines: number[]; others: string[] } {
    const file = join(dir, `c${Math.random().toString(36).slice(2)}.cfg`);
    writeFileSync(file, config);
    const result = spawnSync('haproxy', ['-c', '-f', file], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin' },
    });
    const alerts = `${result.stdout}${result.stderr}`
      .split('\n')
      .filter((line) => line.includes('[ALERT]') && line.includes('parsing ['));
    const lines: number[] = [];
    const others: string[] = [];
    for (const alert of alerts) {
      const found = /:(\d+)\]: too many words, truncating after word 64/.exec(alert);
      if (found === null) others.push(alert);
      else lines.push(Number(found[1]));
    }
    return { lines, others };
  }

  it(`agrees with haproxy -c on ${variants.length} lines around ${maxLineWords} words`, () => {
    // At most 40 lines per run: HAProxy stops reading after 50 fatal errors.
    for (let start = 0; start < variants.length; start += 40) {
      const config = `${head}${variants.slice(start, start + 40).join('\n')}\n`;
      const haproxy = haproxyRefuses(config);
      expect(haproxy.others).toEqual([]);
      const lint = inspectHaproxyConfig(config).findings;
      expect(lint.filter((finding) => finding.reason !== reasons.TooManyWords)).toEqual([]);
      expect(lint.map((finding) => finding.line)).toEqual(haproxy.lines);
    }
    // Both sides of the boundary were met.
    const refused = variants.filter((line) => splitConfigLine(line).tooManyWords !== undefined);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThan(variants.length);
  });
});

describe('the chart default template', () => {
  it('renders lines far below the word limit from a large cluster', async () => {
    const engine = createTemplateEngine();
    const config = readTemplateConfig(defaultTemplateConfig());
    if ('message' in config) throw new Error(config.message);
    const parsed = parseTemplates(engine, config);
    if ('message' in parsed) throw new Error(parsed.message);
    const model = requestModel({
      snapshot: await snapshotOf(40),
      ingressClass: 'haptic',
      now: new Date('2026-12-01T00:00:00Z'),
    });
    const output = renderTemplates(engine, parsed, templateContext(model.model, 'haptic'));
    if (!output.ok) throw new Error(output.message);
    const bundle = assembleBundle(model, output.files);
    if (!bundle.ok) throw new Error(bundle.message);
    const cfg = bundle.files.find((file) => file.path === 'haproxy.cfg')?.content.toString() ?? '';
    const lines = splitConfig(cfg);
    expect(lines.filter((line) => line.error !== undefined)).toEqual([]);
    // Every line of the template has a fixed number of words (values are single words: names,
    // addresses); the longest is the Host check, far below the limit.
    const longest = Math.max(...lines.map((line) => line.words.length));
    expect(longest).toBeLessThanOrEqual(maxLineWords / 2);
    expect(lines.filter((line) => line.words[0]?.text === 'server').length).toBeGreaterThan(40);
  });
});
