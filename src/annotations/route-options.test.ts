/**
 * routeOptions: what one route asks of its backend, from its Ingress's options, its path regex
 * and whether its host is a TLS host of the Ingress; and the key that tells backends of one
 * Service port apart.
 */
import { describe, expect, it } from 'vitest';
import { type IngressOptions, defaultIngressOptions } from './annotation-catalog.ts';
import type { PathRegex } from './annotation-values.ts';
import {
  type BackendOptions,
  type RouteFacts,
  anchoredRegex,
  pathsAreRegex,
  plainBackendOptions,
  routeOptions,
} from './route-options.ts';

const plainRoute: RouteFacts = { regex: undefined, tlsHost: false };
const tlsRoute: RouteFacts = { regex: undefined, tlsHost: true };

function options(set: Partial<IngressOptions> = {}): IngressOptions {
  return { ...defaultIngressOptions, ...set };
}

/** The backend options of a route that can be served. */
function served(set: Partial<IngressOptions>, facts: RouteFacts = plainRoute): BackendOptions {
  const made = routeOptions(options(set), facts);
  if ('problem' in made) throw new Error(made.problem);
  return made;
}

const appRegex: PathRegex = { source: '/app(/|$)(.*)', groups: 2 };

describe('routeOptions', () => {
  it('gives a plain route the shared plain options, keyed ""', () => {
    const made = served({});
    expect(made).toBe(plainBackendOptions);
    expect(made.key).toBe('');
    expect(made).toMatchObject({
      sslRedirectCode: null,
      hsts: false,
      redirect: null,
      appRoot: null,
      rewrite: null,
      connectTimeout: null,
      serverTimeout: null,
      maxBodyBytes: 1024 * 1024,
      allowRanges: null,
      denyRanges: null,
      protocol: null,
      upstreamHost: null,
    });
  });

  it.each<[string, Partial<IngressOptions>, RouteFacts, Partial<BackendOptions>]>([
    [
      'a TLS host: redirect to HTTPS (308) and HSTS',
      {},
      tlsRoute,
      { sslRedirectCode: 308, hsts: true },
    ],
    [
      'a TLS host with ssl-redirect false: HSTS, no redirect',
      { sslRedirect: false },
      tlsRoute,
      { sslRedirectCode: null, hsts: true },
    ],
    [
      'a TLS host with ssl-redirect-code 301',
      { sslRedirectCode: 301 },
      tlsRoute,
      { sslRedirectCode: 301, hsts: true },
    ],
    [
      'another host with force-ssl-redirect: the redirect, no HSTS',
      { forceSslRedirect: true },
      plainRoute,
      { sslRedirectCode: 308, hsts: false },
    ],
    [
      'force-ssl-redirect even where ssl-redirect is false',
      { forceSslRedirect: true, sslRedirect: false },
      plainRoute,
      { sslRedirectCode: 308 },
    ],
    [
      'another host with ssl-redirect only: nothing',
      { sslRedirect: true },
      plainRoute,
      { sslRedirectCode: null, hsts: false, key: '' },
    ],
  ])('%s', (_what, set, facts, expected) => {
    expect(served(set, facts)).toMatchObject(expected);
  });

  it.each<[string, Partial<IngressOptions>, BackendOptions['redirect']]>([
    [
      'a permanent redirect, 301 by default',
      { permanentRedirect: 'https://a.example/' },
      { location: 'https://a.example/', code: 301 },
    ],
    [
      'a permanent redirect with its code',
      { permanentRedirect: 'https://a.example/', permanentRedirectCode: 308 },
      { location: 'https://a.example/', code: 308 },
    ],
    [
      'a temporal redirect, 302 by default',
      { temporalRedirect: 'https://t.example/' },
      { location: 'https://t.example/', code: 302 },
    ],
    [
      'a temporal redirect with its code',
      { temporalRedirect: 'https://t.example/', temporalRedirectCode: 307 },
      { location: 'https://t.example/', code: 307 },
    ],
    [
      'both: the permanent one, with its own code',
      {
        permanentRedirect: 'https://a.example/',
        temporalRedirect: 'https://t.example/',
        temporalRedirectCode: 307,
      },
      { location: 'https://a.example/', code: 301 },
    ],
    [
      'a redirect code alone: no redirect',
      { permanentRedirectCode: 308, temporalRedirectCode: 307 },
      null,
    ],
  ])('redirects for %s', (_what, set, redirect) => {
    expect(served(set).redirect).toEqual(redirect);
  });

  it('rewrites a regex path with the target, the regex anchored and case-insensitive', () => {
    const made = served(
      { useRegex: true, rewriteTarget: { format: '/\\2', highestGroup: 2 } },
      { regex: appRegex, tlsHost: false },
    );
    expect(made.rewrite).toEqual({ regex: '(?i)^(?:/app(/|$)(.*))', format: '/\\2' });
    expect(anchoredRegex('/a|/b')).toBe('(?i)^(?:/a|/b)');
  });

  it('refuses a rewrite naming $3 of a path with two groups, naming both', () => {
    const made = routeOptions(options({ rewriteTarget: { format: '/\\3', highestGroup: 3 } }), {
      regex: appRegex,
      tlsHost: false,
    });
    expect(made).toEqual({
      problem: 'rewrite-target names $3, but the path "/app(/|$)(.*)" has 2 capture group(s)',
    });
  });

  it('refuses a rewrite naming $1 of a path without groups', () => {
    const made = routeOptions(options({ rewriteTarget: { format: '/\\1', highestGroup: 1 } }), {
      regex: { source: '/api', groups: 0 },
      tlsHost: false,
    });
    expect('problem' in made ? made.problem : made).toMatch(/names \$1, .* has 0 capture group/);
  });

  it('rewrites a path without groups to a fixed target', () => {
    const made = served(
      { rewriteTarget: { format: '/', highestGroup: 0 } },
      { regex: { source: '/api', groups: 0 }, tlsHost: false },
    );
    expect(made.rewrite).toEqual({ regex: '(?i)^(?:/api)', format: '/' });
  });

  it('reads rewrite-target as regex paths, as use-regex', () => {
    expect(pathsAreRegex(options())).toBe(false);
    expect(pathsAreRegex(options({ useRegex: true }))).toBe(true);
    expect(pathsAreRegex(options({ rewriteTarget: { format: '/', highestGroup: 0 } }))).toBe(true);
  });

  it.each<[string, Partial<IngressOptions>, string | null, string | null]>([
    ['no timeouts', {}, null, null],
    ['connect 5 s', { connectTimeout: 5_000 }, '5s', null],
    ['read 500 ms', { readTimeout: 500 }, null, '500ms'],
    ['send 90 s', { sendTimeout: 90_000 }, null, '90s'],
    [
      'read 60 s and send 120 s: the larger',
      { readTimeout: 60_000, sendTimeout: 120_000 },
      null,
      '120s',
    ],
    [
      'read 120 s and send 60 s: the larger',
      { readTimeout: 120_000, sendTimeout: 60_000 },
      null,
      '120s',
    ],
    ['read 1.5 s: milliseconds', { readTimeout: 1_500 }, null, '1500ms'],
  ])('writes the timeouts of %s', (_what, set, connect, server) => {
    expect(served(set)).toMatchObject({ connectTimeout: connect, serverTimeout: server });
  });

  it('carries the body limit, the ranges, the protocol and the Host', () => {
    expect(
      served({
        maxBodyBytes: null,
        allowRanges: ['10.0.0.0/8'],
        denyRanges: ['10.1.0.0/16'],
        backendProtocol: 'GRPCS',
        upstreamVhost: 'api.internal',
        appRoot: '/app',
      }),
    ).toMatchObject({
      maxBodyBytes: null,
      allowRanges: ['10.0.0.0/8'],
      denyRanges: ['10.1.0.0/16'],
      protocol: 'GRPCS',
      upstreamHost: 'api.internal',
      appRoot: '/app',
    });
  });

  it('gives the same options the same key and object, however they were made', () => {
    const one = served({ readTimeout: 60_000, allowRanges: ['10.0.0.0/8'] }, tlsRoute);
    const two = served(
      { ...options(), allowRanges: ['10.0.0.0/8'].slice(), readTimeout: 60 * 1000 },
      { regex: undefined, tlsHost: true },
    );
    expect(two).toBe(one);
    expect(one.key).toMatch(/^[0-9a-f]{16}$/);
    // Options that differ only where the route does not read them (a regex without a rewrite).
    expect(
      served(
        { readTimeout: 60_000, allowRanges: ['10.0.0.0/8'] },
        { ...tlsRoute, regex: appRegex },
      ),
    ).toBe(one);
  });

  it('gives different options different keys, and none the plain key', () => {
    const variants: readonly [Partial<IngressOptions>, RouteFacts][] = [
      [{}, tlsRoute],
      [{ sslRedirect: false }, tlsRoute],
      [{ sslRedirectCode: 301 }, tlsRoute],
      [{ forceSslRedirect: true }, plainRoute],
      [{ permanentRedirect: 'https://a.example/' }, plainRoute],
      [{ permanentRedirect: 'https://a.example/', permanentRedirectCode: 308 }, plainRoute],
      [{ temporalRedirect: 'https://a.example/' }, plainRoute],
      [{ appRoot: '/app' }, plainRoute],
      [{ rewriteTarget: { format: '/\\2', highestGroup: 2 } }, { regex: appRegex, tlsHost: false }],
      [{ rewriteTarget: { format: '/\\1', highestGroup: 1 } }, { regex: appRegex, tlsHost: false }],
      [{ connectTimeout: 5_000 }, plainRoute],
      [{ readTimeout: 5_000 }, plainRoute],
      [{ readTimeout: 5_001 }, plainRoute],
      [{ maxBodyBytes: null }, plainRoute],
      [{ maxBodyBytes: 1024 }, plainRoute],
      [{ allowRanges: ['10.0.0.0/8'] }, plainRoute],
      [{ allowRanges: ['10.0.0.0/9'] }, plainRoute],
      [{ denyRanges: ['10.0.0.0/8'] }, plainRoute],
      [{ backendProtocol: 'HTTPS' }, plainRoute],
      // Explicit HTTP overrides the Service port's appProtocol: not the default.
      [{ backendProtocol: 'HTTP' }, plainRoute],
      [{ upstreamVhost: 'api.internal' }, plainRoute],
    ];
    const keys = variants.map(([set, facts]) => served(set, facts).key);
    expect(keys).not.toContain('');
    expect(new Set(keys).size).toBe(keys.length);
    // Asking what the defaults are is asking nothing.
    expect(served({ maxBodyBytes: 1024 * 1024 }).key).toBe('');
  });
});
