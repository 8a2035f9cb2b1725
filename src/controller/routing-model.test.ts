import { describe, expect, it } from 'vitest';
import type { ClusterSnapshot, EndpointSliceView } from './cluster-snapshot.ts';
import { readIngress } from '../validation/ingress-view.ts';
import { buildRoutingModel } from './routing-model.ts';

function view(
  name: string,
  rules: readonly Record<string, unknown>[],
  tls?: readonly Record<string, unknown>[],
) {
  const parsed = readIngress({
    kind: 'Ingress',
    metadata: { namespace: 'app', name },
    spec: { rules, ...(tls === undefined ? {} : { tls }) },
  });
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

const path = (p: string, pathType: string, service = 'web') => ({
  path: p,
  pathType,
  backend: { service: { name: service, port: { name: 'http' } } },
});

function slice(addressType: string, addresses: readonly string[], ready = true): EndpointSliceView {
  return {
    namespace: 'app',
    name: `web-${addressType}`,
    serviceName: 'web',
    addressType,
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [{ addresses, ready }],
  };
}

function snapshot(
  ingresses: ReturnType<typeof view>[],
  slices: EndpointSliceView[] = [],
): ClusterSnapshot {
  return {
    ingresses,
    services: new Map([
      ['app/web', { namespace: 'app', name: 'web', ports: [{ name: 'http', port: 80 }] }],
    ]),
    endpointSlices: new Map([['app/web', slices]]),
    secrets: new Map(),
  };
}

const now = new Date('2026-11-29T12:00:00Z');

describe('buildRoutingModel', () => {
  it('orders map entries so Exact wins over Prefix and the longest prefix comes first', () => {
    const { model } = buildRoutingModel(
      snapshot([
        view('a', [
          {
            host: 'a.example.com',
            http: { paths: [path('/', 'Prefix'), path('/api/', 'Prefix'), path('/api', 'Exact')] },
          },
        ]),
      ]),
      { now },
    );
    expect(model.exactMap).toEqual([
      { key: 'a.example.com/', backend: 'app_web_http' },
      { key: 'a.example.com/api', backend: 'app_web_http' },
    ]);
    expect(model.prefixMap.map((entry) => entry.key)).toEqual([
      'a.example.com/api/',
      'a.example.com/',
    ]);
  });

  it('is the same whatever order the Ingresses arrive in, and the first Ingress by name keeps a contested path', () => {
    const first = view('a', [
      { host: 'x.example.com', http: { paths: [path('/', 'Prefix', 'web')] } },
    ]);
    const second = view('b', [
      { host: 'x.example.com', http: { paths: [path('/', 'Prefix', 'other')] } },
    ]);
    const one = buildRoutingModel(snapshot([first, second]), { now });
    const two = buildRoutingModel(snapshot([second, first]), { now });
    expect(JSON.stringify(one.model)).toBe(JSON.stringify(two.model));
    expect(one.model.routes.map((route) => route.ingress)).toEqual(['app/a']);
  });

  it('takes ready endpoints of matching families only; FQDN names as written', () => {
    const { model } = buildRoutingModel(
      snapshot(
        [view('a', [{ host: 'a.example.com', http: { paths: [path('/', 'Prefix')] } }])],
        [
          slice('IPv4', ['10.0.0.2', '::1', '10.0.0.1']),
          slice('IPv6', ['fd00::1']),
          slice('FQDN', ['db.example.com', 'bad name']),
          slice('IPv4', ['10.0.0.9'], false),
        ],
      ),
      { now },
    );
    expect(model.backends[0]?.servers.map((server) => server.endpoint)).toEqual([
      '10.0.0.1:8080',
      '10.0.0.2:8080',
      'db.example.com:8080',
      '[fd00::1]:8080',
    ]);
  });

  it('serves an Ingress whose TLS Secret is missing with a warning, and excludes one whose Secret is unusable', () => {
    const missing = view(
      'a',
      [{ host: 'a.example.com', http: { paths: [path('/', 'Prefix')] } }],
      [{ hosts: ['a.example.com'], secretName: 'nope' }],
    );
    const broken = view(
      'b',
      [{ host: 'b.example.com', http: { paths: [path('/', 'Prefix')] } }],
      [{ hosts: ['b.example.com'], secretName: 'junk' }],
    );
    const state = snapshot([missing, broken]);
    const result = buildRoutingModel(
      {
        ...state,
        secrets: new Map([
          [
            'app/junk',
            {
              namespace: 'app',
              name: 'junk',
              data: {
                'tls.crt': Buffer.from('x').toString('base64'),
                'tls.key': Buffer.from('y').toString('base64'),
              },
            },
          ],
        ]),
      },
      { now },
    );
    expect(result.model.ingresses.map((ingress) => ingress.name)).toEqual(['a']);
    expect(result.warnings[0]?.message).toContain(
      'names the TLS Secret app/nope, which does not exist',
    );
    expect(result.excluded).toEqual([
      expect.objectContaining({
        name: 'b',
        field: 'spec.tls',
        message: expect.stringContaining('Secret app/junk has no PEM certificate') as unknown,
      }),
    ]);
  });
});
