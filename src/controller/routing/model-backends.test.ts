import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ClusterSnapshot, EndpointSliceView, NameResolution } from './cluster-snapshot.ts';
import { backendName, backendVariant, buildBackend, fqdnNamesInUse } from './model-backends.ts';
import { plainBackendOptions, routeOptions } from '../../annotations/route-options.ts';
import { defaultIngressOptions } from '../../annotations/annotation-catalog.ts';
import { anyRangeEndpointRules } from '../../validation/endpoint-addresses.ts';
import { readIngress } from '../../validation/ingress-view.ts';
import { isProblem } from '../../validation/ingress-checks.ts';
import { type ServiceRef, validateIngress } from '../../validation/validate-ingress.ts';

/** Characters HAProxy accepts in a proxy name (its invalid_char()). */
const haproxyName = /^[A-Za-z0-9_.:-]+$/;

/** Every DNS label over `alphabet` up to `length` characters (as validateIngress accepts). */
function labels(alphabet: string, length: number, first = alphabet): string[] {
  const chars = Array.from(alphabet);
  let level = Array.from(first);
  const all = [...level];
  for (let n = 2; n <= length; n += 1) {
    level = level.flatMap((prefix) => chars.map((c) => prefix + c));
    all.push(...level);
  }
  return all.filter((label) => !label.endsWith('-'));
}

function randomLabel(alphabet: string, max: number, first = alphabet): string {
  const length = randomInt(1, max + 1);
  let label = first[randomInt(first.length)] ?? 'a';
  while (label.length < length) label += alphabet[randomInt(alphabet.length)] ?? 'a';
  return label.endsWith('-') ? `${label.slice(0, -1)}a` : label;
}

/** The backend reference validateIngress makes of a namespace, Service and port. */
function validated(namespace: string, service: string, port: number | string): ServiceRef {
  const view = readIngress({
    kind: 'Ingress',
    metadata: { namespace, name: 'x' },
    spec: {
      defaultBackend: {
        service: {
          name: service,
          port: typeof port === 'number' ? { number: port } : { name: port },
        },
      },
    },
  });
  if (typeof view === 'string') throw new Error(view);
  const checked = validateIngress(view);
  if (isProblem(checked)) throw new Error(checked.message);
  const [route] = checked.routes;
  if (route === undefined) throw new Error('no route');
  return route.service;
}

/** Names shared by two triples, names that do not split back, and names HAProxy refuses. */
function injectivityFailures(
  triples: readonly (readonly [string, string, number | string])[],
): string[] {
  const failures: string[] = [];
  const seen = new Map<string, string>();
  for (const [namespace, service, port] of triples) {
    const name = backendName(namespace, validated(namespace, service, port));
    const parts = JSON.stringify([namespace, service, String(port)]);
    const other = seen.get(name);
    if (other !== undefined) failures.push(`${name}: ${other} and ${parts}`);
    seen.set(name, parts);
    if (JSON.stringify(name.split(':')) !== parts) failures.push(`${name} does not split back`);
    if (!haproxyName.test(name)) failures.push(`${name} is no HAProxy name`);
  }
  return failures;
}

describe('backendName', () => {
  it('keeps the Service "not" port "found" apart from the template backend haptic_not_found and from Service "not-found"', () => {
    const names = [
      backendName('haptic', { name: 'not', port: { name: 'found' } }),
      backendName('haptic', { name: 'not-found', port: { number: 80 } }),
      backendName('haptic-not', { name: 'found', port: { number: 80 } }),
    ];
    expect(names).toEqual(['haptic:not:found', 'haptic:not-found:80', 'haptic-not:found:80']);
    expect(names).not.toContain('haptic_not_found');
  });

  it('is injective over every namespace, Service and port of up to four characters from {a, 0, -}', () => {
    const namespaces = labels('a0-', 4, 'a0');
    const services = labels('a0-', 4, 'a');
    const ports: (number | string)[] = [1, 10, 100, ...labels('a0-', 4, 'a')];
    const triples = namespaces.flatMap((namespace) =>
      services.flatMap((service) => ports.map((port) => [namespace, service, port] as const)),
    );
    expect(triples.length).toBeGreaterThan(10_000);
    expect(injectivityFailures(triples)).toEqual([]);
  });

  it('is injective, and a valid HAProxy name of at most 191 characters, over 20,000 random long names', () => {
    const unique = new Map<string, readonly [string, string, number | string]>();
    while (unique.size < 20_000) {
      const triple = [
        randomLabel('ab-', 63, 'ab'),
        randomLabel('ab-', 63, 'ab'),
        randomInt(2) === 0 ? randomInt(1, 65536) : randomLabel('ab-', 63, 'ab'),
      ] as const;
      unique.set(JSON.stringify(triple), triple);
    }
    expect(injectivityFailures([...unique.values()])).toEqual([]);
    const longest = backendName('a'.repeat(63), {
      name: 'b'.repeat(63),
      port: { name: 'c'.repeat(63) },
    });
    expect(longest).toHaveLength(191);
  });
});

describe('fqdnNamesInUse', () => {
  const fqdn = (service: string, addresses: string[], ready = true): EndpointSliceView => ({
    namespace: 'app',
    name: `${service}-x`,
    serviceName: service,
    addressType: 'FQDN',
    ports: [],
    endpoints: [{ addresses, ready }],
  });

  it('lists ready FQDN names of the Services the Ingresses name, and nothing of other Services', () => {
    const view = readIngress({
      kind: 'Ingress',
      metadata: { namespace: 'app', name: 'a' },
      spec: {
        defaultBackend: { service: { name: 'web', port: { number: 80 } } },
        rules: [
          {
            http: {
              paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'api' } } }],
            },
          },
        ],
      },
    });
    if (typeof view === 'string') throw new Error(view);
    const slices = new Map([
      [
        'app/web',
        [fqdn('web', ['db.example.com', 'Bad Name']), fqdn('web', ['down.example.com'], false)],
      ],
      ['app/api', [fqdn('api', ['127.0.0.11'])]],
      ['app/unused', [fqdn('unused', ['elsewhere.example.com'])]],
      ['other/web', [fqdn('web', ['other.example.com'])]],
    ]);
    expect([...fqdnNamesInUse([view], slices)].sort()).toEqual(['127.0.0.11', 'db.example.com']);
  });
});

describe('a Service of type ExternalName', () => {
  const service = {
    namespace: 'app',
    name: 'db',
    ports: [{ name: 'https', port: 8443 }],
    externalName: 'db.example.com',
  };
  const state = (resolved: NameResolution | undefined): ClusterSnapshot => ({
    ingresses: [],
    services: new Map([['app/db', service]]),
    endpointSlices: new Map(),
    secrets: new Map(),
    fqdnNames: new Map(resolved === undefined ? [] : [['db.example.com', resolved]]),
    endpointRules: anyRangeEndpointRules,
  });

  it('is resolved by the controller, its name listed among the names in use', () => {
    const view = readIngress({
      kind: 'Ingress',
      metadata: { namespace: 'app', name: 'a' },
      spec: { defaultBackend: { service: { name: 'db', port: { number: 443 } } } },
    });
    if (typeof view === 'string') throw new Error(view);
    expect([...fqdnNamesInUse([view], new Map(), state(undefined).services)]).toEqual([
      'db.example.com',
    ]);
  });

  it('serves its addresses on the port the Ingress names, by number or by the Service port name', () => {
    const resolved = state({ addresses: ['10.1.2.3', '10.1.2.4'] });
    const byNumber = buildBackend(resolved, 'app', { name: 'db', port: { number: 443 } });
    expect(byNumber.problems).toEqual([]);
    expect(byNumber.backend.servers.map((s) => s.endpoint)).toEqual([
      '10.1.2.3:443',
      '10.1.2.4:443',
    ]);
    const byName = buildBackend(resolved, 'app', { name: 'db', port: { name: 'https' } });
    expect(byName.backend.servers.map((s) => s.endpoint)).toEqual([
      '10.1.2.3:8443',
      '10.1.2.4:8443',
    ]);
  });

  it('refuses what the name resolves to where endpoints may not point, and says a name that does not resolve', () => {
    const loopback = buildBackend(state({ addresses: ['127.0.0.1'] }), 'app', {
      name: 'db',
      port: { number: 443 },
    });
    expect(loopback.backend.servers).toEqual([]);
    expect(loopback.problems.map((p) => p.reason)).toEqual(['EndpointRefused']);
    expect(loopback.problems[0]?.message).toContain('Service app/db (type ExternalName)');
    const unresolved = buildBackend(state({ error: 'ENOTFOUND' }), 'app', {
      name: 'db',
      port: { number: 443 },
    });
    expect(unresolved.backend.servers).toEqual([]);
    expect(unresolved.problems.map((p) => p.reason)).toEqual(['EndpointUnresolved']);
  });
});

describe("a backend's protocol", () => {
  const state = (appProtocol: string | undefined): ClusterSnapshot => ({
    ingresses: [],
    services: new Map([
      [
        'app/api',
        {
          namespace: 'app',
          name: 'api',
          ports: [
            { name: 'grpc', port: 50051, ...(appProtocol === undefined ? {} : { appProtocol }) },
          ],
        },
      ],
    ]),
    endpointSlices: new Map(),
    secrets: new Map(),
    fqdnNames: new Map(),
    endpointRules: anyRangeEndpointRules,
  });
  const ref = { name: 'api', port: { number: 50051 } };

  it.each([
    [undefined, 'HTTP'],
    ['kubernetes.io/h2c', 'H2C'],
    ['H2C', 'H2C'],
    ['grpc', 'GRPC'],
    ['https', 'HTTPS'],
    ['kubernetes.io/wss', 'HTTPS'],
    ['example.com/custom', 'HTTP'],
  ])("follows the Service port's appProtocol %s: %s", (appProtocol, protocol) => {
    expect(buildBackend(state(appProtocol), 'app', ref).backend.protocol).toBe(protocol);
  });

  it('follows backend-protocol over appProtocol', () => {
    const base = buildBackend(state('kubernetes.io/h2c'), 'app', ref);
    const options = routeOptions(
      { ...defaultIngressOptions, backendProtocol: 'HTTPS' },
      { regex: undefined, tlsHost: false },
    );
    if ('problem' in options) throw new Error(options.problem);
    expect(backendVariant(base, options).backend.protocol).toBe('HTTPS');
    expect(backendVariant(base, plainBackendOptions).backend.protocol).toBe('H2C');
  });
});
