/**
 * The lint with readings kept between runs (lint-lines.ts) answers as the lint from
 * nothing, for random sequences of configurations built from lines that change the walk's
 * state (sections, `.if` blocks, `default-path config`), refused lines and lines that declare
 * backends and crt-lists, in random order, so the same text meets different states.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { inspectHaproxyConfig } from '../../../src/haproxy/config-lint.ts';
import { LintLineCache } from '../../../src/haproxy/lint-lines.ts';

const lines = [
  'global',
  '  default-path config',
  '  lua-load files/x.lua',
  'defaults',
  '  mode http',
  '  timeout client 5s',
  'frontend fe',
  '  bind :8080',
  '  bind :8443 ssl crt-list ssl/certificates.list',
  '  bind /run/x.sock',
  '  http-request set-var(txn.x) str(a),map(maps/a.map,def)',
  '  http-request set-var(txn.x) str(a),map(/etc/a.map,def)',
  '  use_backend %[env(HOME)]',
  '.if defined(X)',
  '.endif',
  'backend be_a',
  'backend "quoted name"',
  '  server s1 10.0.0.1:80',
  '  errorfile 503 errors/503.http',
  'program evil',
  '  command /bin/sh',
  'listen stats',
  '[scope]',
  '  bad "quote',
  '',
  '# a comment',
];

const production = readFileSync(
  join(projectRoot, 'test/fixtures/haproxy-production/haproxy.cfg'),
  'utf8',
);

describe('the HAProxy lint with kept line readings', () => {
  it('answers as the lint from nothing, for random sequences of configurations', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.constantFrom(...lines), { maxLength: 30 }), {
          minLength: 1,
          maxLength: 8,
        }),
        (configs) => {
          const cache = new LintLineCache();
          for (const config of configs) {
            const text = `${config.join('\n')}\n`;
            expect(inspectHaproxyConfig(text, cache)).toEqual(inspectHaproxyConfig(text));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('answers as the lint from nothing when a line is added to a production configuration', () => {
    const cache = new LintLineCache();
    expect(inspectHaproxyConfig(production, cache)).toEqual(inspectHaproxyConfig(production));
    for (const extra of lines) {
      const text = production.replace('\nbackend ', `\n${extra}\nbackend `);
      expect(inspectHaproxyConfig(text, cache)).toEqual(inspectHaproxyConfig(text));
    }
  });
});
