import { describe, expect, it } from 'vitest';
import { fileSetDigest } from './file-set-digest.ts';
import { maxRuntimeChanges, parseRuntimeChangeRequest } from './runtime-change-request.ts';

const digest = (n: number): string => `sha256:${String(n).repeat(64).slice(0, 64)}`;
const change = {
  backend: 'team:web:80',
  server: 's2',
  address: '10.0.0.7',
  port: 8080,
  state: 'ready',
} as const;
const body = (overrides: Record<string, unknown> = {}) => ({
  baseDigest: digest(1),
  resultDigest: digest(2),
  changes: [change],
  ...overrides,
});
const withChange = (overrides: Record<string, unknown>) =>
  body({ changes: [{ ...change, ...overrides }] });

describe('parseRuntimeChangeRequest', () => {
  it('accepts two set digests and server slots, IPv4 or IPv6, ready or maint', () => {
    const parsed = parseRuntimeChangeRequest(
      body({
        changes: [change, { ...change, server: 's3', address: 'fd00::1', state: 'maint' }],
      }),
    );
    expect(parsed).toStrictEqual({
      ok: true,
      baseDigest: digest(1),
      resultDigest: digest(2),
      changes: [change, { ...change, server: 's3', address: 'fd00::1', state: 'maint' }],
    });
  });

  it.each([
    ['a body that is not an object', [], 'changes', /JSON object/],
    [
      'a missing baseDigest',
      body({ baseDigest: undefined }),
      'baseDigest',
      /baseDigest must be "sha256:"/,
    ],
    [
      'an upper-case resultDigest',
      body({ resultDigest: digest(2).toUpperCase() }),
      'resultDigest',
      /lower-case hex/,
    ],
    ['no changes', body({ changes: [] }), 'changes', /at least one server slot/],
    [
      'a change that is not an object',
      body({ changes: ['s2'] }),
      'changes[0]',
      /must be an object/,
    ],
    [
      'a backend name with a space',
      withChange({ backend: 'team web' }),
      'changes[0].backend',
      /backend name/,
    ],
    [
      'a server name with a ";"',
      withChange({ server: 's2;shutdown' }),
      'changes[0].server',
      /server name/,
    ],
    [
      'a host name for an address',
      withChange({ address: 'web.example.com' }),
      'changes[0].address',
      /IPv4 or IPv6 literal/,
    ],
    [
      'a bracketed IPv6 address',
      withChange({ address: '[fd00::1]' }),
      'changes[0].address',
      /without brackets/,
    ],
    ['port 0', withChange({ port: 0 }), 'changes[0].port', /1 to 65535/],
    ['a port as a string', withChange({ port: '8080' }), 'changes[0].port', /integer/],
    ['an unknown state', withChange({ state: 'drain' }), 'changes[0].state', /"ready".*"maint"/],
    [
      'the same slot twice',
      body({ changes: [change, { ...change, port: 9090 }] }),
      'changes[1]',
      /team:web:80\/s2 again, as changes\[0\]/,
    ],
  ])('refuses %s, naming the field', (_, request, field, message) => {
    const parsed = parseRuntimeChangeRequest(request);
    expect(parsed).toMatchObject({ ok: false, reason: 'RequestInvalid', field });
    expect(parsed.ok ? '' : parsed.message).toMatch(message);
  });

  it('refuses more slots than the limit as too large, pointing at the complete set', () => {
    const changes = Array.from({ length: maxRuntimeChanges + 1 }, (_, i) => ({
      ...change,
      server: `s${i}`,
    }));
    const parsed = parseRuntimeChangeRequest(body({ changes }));
    expect(parsed).toMatchObject({ ok: false, reason: 'TooLarge', field: 'changes' });
    expect(parsed.ok ? '' : parsed.message).toMatch(/POST \/v1\/apply/);
  });
});

describe('fileSetDigest', () => {
  const files = [
    { path: 'haproxy.cfg', digest: digest(1) },
    { path: 'maps/hosts.map', digest: digest(2) },
  ];

  it('does not depend on the order of the files', () => {
    expect(fileSetDigest([...files].reverse())).toBe(fileSetDigest(files));
  });

  it('changes with any file digest, a path, or a file more or less', () => {
    const config = { path: 'haproxy.cfg', digest: digest(1) };
    const base = fileSetDigest(files);
    expect(base).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(fileSetDigest([config, { path: 'maps/hosts.map', digest: digest(3) }])).not.toBe(base);
    expect(fileSetDigest([config, { path: 'maps/other.map', digest: digest(2) }])).not.toBe(base);
    expect(fileSetDigest([config])).not.toBe(base);
  });
});
