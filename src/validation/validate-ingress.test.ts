import { describe, expect, it } from 'vitest';
import { isProblem } from './ingress-checks.ts';
import { readIngress } from './ingress-view.ts';
import { type ValidIngress, validateIngress } from './validate-ingress.ts';
import { defaultIngressOptions } from '../annotations/annotation-catalog.ts';
import { plainBackendOptions, routeOptions } from '../annotations/route-options.ts';

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
    const plain = plainBackendOptions;
    // The TLS host's route redirects HTTP to HTTPS and sends HSTS.
    const tlsHost = routeOptions(defaultIngressOptions, { regex: undefined, tlsHost: true });
    expect(tlsHost).toMatchObject({ sslRedirectCode: 308, hsts: true });
    expect(result.routes).toEqual([
      {
        ...{ field: 'spec.defaultBackend', host: '', path: '/', pathType: 'Prefix' },
        ...{ service, options: plain },
      },
      {
        field: 'spec.rules[0].http.paths[0]',
        host: '*.example.com',
        path: '/a/',
        pathType: 'Exact',
        service,
        options: tlsHost,
      },
      {
        ...{ field: 'spec.rules[1].http.paths[0]', host: '', path: '/b', pathType: 'Prefix' },
        ...{ service, options: plain },
      },
    ]);
    expect(result.findings).toEqual([]);
    expect(result.tls).toEqual([
      { field: 'spec.tls[0]', hosts: ['*.example.com'], secretName: 'wild' },
    ]);
  });

  describe('with annotations', () => {
    const nginx = (name: string) => `nginx.ingress.kubernetes.io/${name}`;
    const paths = (...list: string[]) => ({
      host: 'a.example.com',
      http: { paths: list.map((path) => ({ path, pathType: 'Prefix', backend })) },
    });
    const valid = (result: ReturnType<typeof validateIngress>): ValidIngress => {
      if (isProblem(result)) throw new Error(result.message);
      return result;
    };
    const served = (ingress: ValidIngress) =>
      ingress.routes.map((route) => `${route.pathType} ${route.path}`);

    it.each([
      ['an unbalanced group', '/bad('],
      ['a lookbehind', '/(?<=x)y'],
      ['a space', '/a b'],
      ['a line break and a directive', '/x\n  lua-load /tmp/x'],
      ['a "#"', '/a#b'],
      ["a POSIX class that would leave the host's group", '/x[[:alpha:](])|([[:alpha:])].*'],
    ])(
      'with use-regex, leaves out only a path with %s, with a finding naming it, and serves the others as Regex',
      (_what, bad) => {
        const result = valid(
          validateIngress(
            ingress(
              { rules: [paths('/ok(/|$)(.*)', bad, '/api', '/a|/b')] },
              { [nginx('use-regex')]: 'true' },
            ),
          ),
        );
        expect(served(result)).toEqual(['Regex /ok(/|$)(.*)', 'Regex /api', 'Regex /a|/b']);
        expect(result.findings).toEqual([
          {
            reason: 'AnnotationInvalid',
            field: 'spec.rules[0].http.paths[1].path',
            annotations: [],
            message: expect.stringContaining(
              `Ingress shop/web has spec.rules[0].http.paths[1].path ${JSON.stringify(bad)}, which is not a regular expression`,
            ) as unknown,
          },
        ]);
        expect(result.findings[0]?.message).toMatch(/That path is left out until it is fixed\.$/);
      },
    );

    it('bounds a hostile regex path in the finding to 80 characters', () => {
      const bad = `/${'(a'.repeat(2000)}`;
      const result = valid(
        validateIngress(ingress({ rules: [paths(bad, '/ok')] }, { [nginx('use-regex')]: 'true' })),
      );
      expect(served(result)).toEqual(['Regex /ok']);
      const message = result.findings[0]?.message ?? '';
      expect(message).toContain(JSON.stringify(bad.slice(0, 80)));
      expect(message).not.toContain(bad.slice(0, 81));
    });

    it('reads every path of the rules as a regex with rewrite-target, whatever its type, and the default backend as a Prefix', () => {
      const result = valid(
        validateIngress(
          ingress(
            {
              defaultBackend: backend,
              rules: [
                {
                  host: 'a.example.com',
                  http: {
                    paths: [
                      { path: '/app(/|$)(.*)', pathType: 'Exact', backend },
                      { path: '/v1/(.*)', pathType: 'ImplementationSpecific', backend },
                    ],
                  },
                },
              ],
            },
            { [nginx('rewrite-target')]: '/$2' },
          ),
        ),
      );
      expect(
        result.routes.map((route) => [route.pathType, route.path, route.options.rewrite]),
      ).toEqual([
        ['Prefix', '/', null],
        ['Regex', '/app(/|$)(.*)', { regex: '(?i)^(?:/app(/|$)(.*))', format: '/\\2' }],
      ]);
      // /v1/(.*) has one group, and the target names $2: that path is left out, told.
      expect(result.findings).toEqual([
        {
          reason: 'AnnotationInvalid',
          field: 'spec.rules[0].http.paths[1]',
          annotations: [],
          message: expect.stringContaining(
            'rewrite-target names $2, but the path "/v1/(.*)" has 1 capture group(s)',
          ) as unknown,
        },
      ]);
    });

    it.each([
      [
        'a refused snippet',
        nginx('configuration-snippet'),
        'more_set_headers "X: y";',
        'AnnotationRefused',
      ],
      [
        'a refused authentication',
        nginx('auth-url'),
        'https://auth.example.com/',
        'AnnotationRefused',
      ],
      ['a value that does not parse', nginx('proxy-body-size'), 'huge', 'AnnotationInvalid'],
      [
        'a hostile value',
        nginx('permanent-redirect'),
        "https://x/' code 301\nlua-load /x",
        'AnnotationInvalid',
      ],
    ])(
      'leaves every route out for %s, but keeps the Ingress valid with its TLS entries and the finding',
      (_what, name, value, reason) => {
        const result = valid(
          validateIngress(
            ingress(
              {
                defaultBackend: backend,
                rules: [paths('/', '/api')],
                tls: [{ hosts: ['a.example.com'], secretName: 'web-tls' }],
              },
              { [name]: value, [nginx('use-regex')]: 'true' },
            ),
          ),
        );
        expect(result.routes).toEqual([]);
        expect(result.tls).toEqual([
          { field: 'spec.tls[0]', hosts: ['a.example.com'], secretName: 'web-tls' },
        ]);
        expect(result.findings).toEqual([
          expect.objectContaining({
            reason,
            field: `metadata.annotations[${JSON.stringify(name)}]`,
            annotations: [name],
          }),
        ]);
      },
    );

    it('serves the routes with an annotation it does not read, and tells it', () => {
      const result = valid(
        validateIngress(ingress({ rules: [paths('/')] }, { [nginx('x-no-such-annotation')]: 'x' })),
      );
      expect(served(result)).toEqual(['Prefix /']);
      expect(result.findings.map((finding) => finding.reason)).toEqual(['AnnotationIgnored']);
    });

    it("gives the routes of the Ingress's TLS hosts the HTTPS redirect and HSTS, and others the Ingress's options only", () => {
      const result = valid(
        validateIngress(
          ingress(
            {
              rules: [paths('/'), { ...paths('/'), host: 'b.example.com' }],
              tls: [{ hosts: ['a.example.com'], secretName: 'web-tls' }],
            },
            { [nginx('proxy-read-timeout')]: '120' },
          ),
        ),
      );
      expect(
        result.routes.map((route) => [
          route.host,
          route.options.sslRedirectCode,
          route.options.hsts,
          route.options.serverTimeout,
        ]),
      ).toEqual([
        ['a.example.com', 308, true, '120s'],
        ['b.example.com', null, false, '120s'],
      ]);
      const [tlsRoute, other] = result.routes;
      expect(tlsRoute?.options.key).not.toBe(other?.options.key);
    });

    it('counts the rule hosts as TLS hosts for a TLS entry without hosts', () => {
      const result = valid(
        validateIngress(ingress({ rules: [paths('/')], tls: [{ secretName: 'web-tls' }] })),
      );
      expect(result.routes[0]?.options).toMatchObject({ sslRedirectCode: 308, hsts: true });
    });
  });
});
