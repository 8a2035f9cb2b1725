import { describe, expect, it } from 'vitest';
import { maxServersPerBackend } from '../../../src/controller/routing/model-backends.ts';
import { slotCount } from '../../../src/controller/routing/server-slots.ts';
import {
  haproxyLintReasons as reasons,
  inspectHaproxyConfig,
} from '../../../src/haproxy/config-lint.ts';
import { splitConfigLine } from '../../../src/haproxy/config-words.ts';
import { LintLineCache } from '../../../src/haproxy/lint-lines.ts';
import {
  maxServersInConfig,
  maxServersPerProxy,
  templateServerCount,
} from '../../../src/haproxy/server-count.ts';

const head = `global
  default-path config
defaults
  mode http
  timeout client 5s
  timeout connect 5s
  timeout server 5s
`;

/** `backends` backends of `lines` each, after the head (line 8 onwards). */
function config(backends: number, lines: (backend: number) => readonly string[]): string {
  const body = Array.from({ length: backends }, (_, backend) =>
    [`backend b${String(backend)}`, ...lines(backend)].join('\n'),
  );
  return `${head}${body.join('\n')}\n`;
}

const count = (word: string) => templateServerCount(splitConfigLine(word).words[0]);

describe('server-template counts', () => {
  it.each([
    ['5', 5],
    ['1-5', 5],
    ['3-3', 1],
    ['0-3', 4],
    ['010', 10],
    ['0', 0],
    ['9-2', 0],
    ['1-50000', 50_000],
  ])('reads %s as HAProxy does: %i servers', (word, servers) => {
    expect(count(word)).toBe(servers);
  });

  it.each(['+5', '-5', '1-2-3', '5x', '0x10', '1234567890', '"${N}"', '" 5"'])(
    'does not read %s (the lint refuses it)',
    (word) => {
      expect(count(word)).toBeUndefined();
    },
  );
});

describe('the server bounds of the lint', () => {
  it('are the server slots of the most endpoints the controller gives one backend', () => {
    expect(slotCount(maxServersPerBackend)).toBe(maxServersPerProxy);
  });

  it('accept a backend of 8,192 servers and eight of them', () => {
    const full = (backends: number) =>
      inspectHaproxyConfig(
        config(backends, () => [`  server-template s 1-${String(maxServersPerProxy)} 10.0.0.1:80`]),
      ).findings;
    expect(full(1)).toEqual([]);
    expect(full(maxServersInConfig / maxServersPerProxy)).toEqual([]);
  });

  it('refuse the server-template line of the issue (50,000 servers) with line, count, bound and fix', () => {
    const findings = inspectHaproxyConfig(
      config(1, () => ['  server s0 10.0.0.1:80', '  server-template s 1-50000 10.0.0.2:80']),
    ).findings;
    expect(findings).toEqual([
      {
        line: 10,
        directive: 'server-template s 1-50000',
        reason: reasons.TooManyServers,
        message:
          'line 10: "server-template s 1-50000" brings its section to 50001 servers, more than the 8192 one backend may declare (the server slots of the 4,096 endpoints the controller gives a backend at most); haproxy -c takes time that grows with the square of a backend\'s servers; declare at most 8192 servers per backend: lower the server-template count, or spread the servers over several backends.',
      },
    ]);
  });

  it('count server lines and templates of one section together, once per section', () => {
    const findings = inspectHaproxyConfig(
      config(2, () => [
        '  server-template a 8000 10.0.0.1:80',
        ...Array.from({ length: 200 }, () => '  server x 10.0.0.2:80'),
      ]),
    ).findings;
    // The 193rd server line of each backend is its 8,193rd server.
    expect(findings.map((finding) => [finding.line, finding.reason])).toEqual([
      [8 + 1 + 193, reasons.TooManyServers],
      [8 + 202 + 1 + 193, reasons.TooManyServers],
    ]);
  });

  it('refuse the server that goes past 65,536 in all, and only that one', () => {
    const backends = maxServersInConfig / 4096;
    const findings = inspectHaproxyConfig(
      config(backends + 1, () => ['  server-template s 4096 10.0.0.1:80']),
    ).findings;
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      line: 8 + 2 * backends + 1,
      reason: reasons.TooManyServers,
      message: expect.stringContaining(
        'brings the configuration to 69632 servers, more than the 65536 haptic lets haproxy -c check',
      ) as unknown,
    });
  });

  it('refuse a count it cannot read, naming the form to write', () => {
    const findings = inspectHaproxyConfig(
      config(1, () => [
        '  server-template s "${HAPTIC_LISTEN_ADDRESS}5" 10.0.0.1:80',
        '  server-template t 1-2-3 10.0.0.1:80',
      ]),
    ).findings;
    expect(findings.map((finding) => finding.message)).toEqual([
      'line 9: "server-template ${HAPTIC_LISTEN_ADDRESS}5" is not a server count haptic can read; write the count as a whole number N or a range LOW-HIGH of whole numbers, literally.',
      'line 10: "server-template 1-2-3" is not a server count haptic can read; write the count as a whole number N or a range LOW-HIGH of whole numbers, literally.',
    ]);
  });

  it('count the same with kept line readings as without', () => {
    const text = config(2, (backend) => [
      `  server-template s 1-${String(5000 + backend * 4000)} 10.0.0.1:80`,
    ]);
    const lines = new LintLineCache();
    const fresh = inspectHaproxyConfig(text).findings;
    expect(fresh).toHaveLength(1);
    expect(inspectHaproxyConfig(text, lines).findings).toEqual(fresh);
    expect(inspectHaproxyConfig(text, lines).findings).toEqual(fresh);
  });
});
