import { describe, expect, it } from 'vitest';
import { isProblem } from './ingress-checks.ts';
import { readIngress } from './ingress-view.ts';
import { validateIngress } from './validate-ingress.ts';

function ingress(spec: Record<string, unknown>, annotations: Record<string, string> = {}) {
  const view = readIngress({
    kind: 'Ingress',
    metadata: { namespace: 'shop', name: 'web', annotations },
    spec,
  });
  if (typeof view === 'string') throw new Error(view);
  return view;
}

const backend = { service: { name: 'web', port: { number: 80 } } };
const rule = (host: string | undefined, path: string, pathType = 'Prefix') => ({
  ...(host === undefined ? {} : { host }),
  http: { paths: [{ path, pathType, backend }] },
});

describe('validateIngress', () => {
  it.each([
    [
      'a newline in a path',
      { rules: [rule('a.example.com', '/x\n  lua-load /tmp/x')] },
      'spec.rules[0].http.paths[0].path',
    ],
    [
      'a "#" in a path',
      { rules: [rule('a.example.com', '/x#y')] },
      'spec.rules[0].http.paths[0].path',
    ],
    [
      'a space in a path',
      { rules: [rule('a.example.com', '/x y')] },
      'spec.rules[0].http.paths[0].path',
    ],
    [
      'an encoded newline in a path',
      { rules: [rule('a.example.com', '/x%0a')] },
      'spec.rules[0].http.paths[0].path',
    ],
    [
      'a relative path',
      { rules: [rule('a.example.com', 'x')] },
      'spec.rules[0].http.paths[0].path',
    ],
    ['a "#" in a host', { rules: [rule('a#b.example.com', '/')] }, 'spec.rules[0].host'],
    [
      'a newline in a host',
      { rules: [rule('a.example.com\nlua-load x', '/')] },
      'spec.rules[0].host',
    ],
    ['an upper-case host', { rules: [rule('A.example.com', '/')] }, 'spec.rules[0].host'],
    [
      'an unknown path type',
      { rules: [rule('a.example.com', '/', 'Regex')] },
      'spec.rules[0].http.paths[0].pathType',
    ],
    [
      'a TLS host with a quote',
      {
        rules: [rule('a.example.com', '/')],
        tls: [{ hosts: ['a".example.com'], secretName: 's' }],
      },
      'spec.tls[0].hosts[0]',
    ],
    [
      'a resource backend',
      {
        rules: [
          {
            host: 'a.example.com',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { resource: { kind: 'Bucket', name: 'b' } },
                },
              ],
            },
          },
        ],
      },
      'spec.rules[0].http.paths[0].backend',
    ],
  ])('excludes an Ingress with %s, naming %s', (_what, spec, field) => {
    const result = validateIngress(ingress(spec));
    expect(isProblem(result) ? result.field : 'accepted').toBe(field);
    expect(isProblem(result) ? result.message : '').toMatch(
      /^Ingress shop\/web has .*; (fix|use|give|name|HAProxy)/,
    );
  });

  it.each(['', 'Shop', 'a.b', 'x:y', 'a'.repeat(64)])(
    'excludes an Ingress in the namespace %j, which becomes part of backend names',
    (namespace) => {
      const view = readIngress({
        kind: 'Ingress',
        metadata: { namespace, name: 'web' },
        spec: { rules: [rule('a.example.com', '/')] },
      });
      if (typeof view === 'string') throw new Error(view);
      const result = validateIngress(view);
      expect(isProblem(result) ? result.field : 'accepted').toBe('metadata.namespace');
    },
  );

  it.each([
    ['an RFC 3339 string (AdmissionReview)', '2026-01-02T03:04:05Z', 1767323045000],
    ['a Date (client-node informer)', new Date('2026-01-02T03:04:05Z'), 1767323045000],
    ['nothing (an object being created)', undefined, undefined],
    ['garbage', 'yesterday', undefined],
  ])('reads creationTimestamp from %s', (_what, creationTimestamp, createdAt) => {
    const view = readIngress({
      kind: 'Ingress',
      metadata: { namespace: 'shop', name: 'web', creationTimestamp },
      spec: {},
    });
    expect(typeof view === 'string' ? view : view.createdAt).toBe(createdAt);
  });

  it('excludes a template annotation with a line break, and ignores other annotations', () => {
    const bad = validateIngress(
      ingress(
        { rules: [rule('a.example.com', '/')] },
        { 'haproxy-haptic.org/timeout': '5s\nlua-load x' },
      ),
    );
    expect(isProblem(bad) ? bad.field : '').toBe(
      'metadata.annotations["haproxy-haptic.org/timeout"]',
    );
    const good = validateIngress(
      ingress(
        { rules: [rule('a.example.com', '/')] },
        { 'haproxy-haptic.org/timeout': '5s', 'other.io/x': 'a\nb' },
      ),
    );
    expect(isProblem(good) ? good.message : good.annotations).toEqual({ timeout: '5s' });
  });

  it('accepts wildcard hosts, rules without a host, a default backend, and serves ImplementationSpecific as Prefix', () => {
    const result = validateIngress(
      ingress({
        defaultBackend: backend,
        rules: [
          rule('*.example.com', '/a/', 'Exact'),
          rule(undefined, '/b', 'ImplementationSpecific'),
        ],
        tls: [{ hosts: ['*.example.com'], secretName: 'wild' }],
      }),
    );
    if (isProblem(result)) throw new Error(result.message);
    const service = { name: 'web', port: { number: 80 } };
    expect(result.routes).toEqual([
      { field: 'spec.defaultBackend', host: '', path: '/', pathType: 'Prefix', service },
      {
        field: 'spec.rules[0].http.paths[0]',
        host: '*.example.com',
        path: '/a/',
        pathType: 'Exact',
        service,
      },
      { field: 'spec.rules[1].http.paths[0]', host: '', path: '/b', pathType: 'Prefix', service },
    ]);
    expect(result.tls).toEqual([
      { field: 'spec.tls[0]', hosts: ['*.example.com'], secretName: 'wild' },
    ]);
  });
});
