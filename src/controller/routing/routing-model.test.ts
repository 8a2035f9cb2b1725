import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterSnapshot, EndpointSliceView, SecretView } from './cluster-snapshot.ts';
import { ingressEvents, ingressStates } from './ingress-events.ts';
import { readIngress } from '../../validation/ingress-view.ts';
import { KeptBackends, maxServersPerBackend } from './model-backends.ts';
import { KeptModel, buildRoutingModel } from './routing-model.ts';
import { type EndpointRules, anyRangeEndpointRules } from '../../validation/endpoint-addresses.ts';

interface ViewOptions {
  readonly namespace?: string;
  readonly created?: string;
  readonly tls?: readonly Record<string, unknown>[];
  readonly annotations?: Readonly<Record<string, string>>;
}

function view(name: string, rules: readonly Record<string, unknown>[], options: ViewOptions = {}) {
  const parsed = readIngress({
    kind: 'Ingress',
    metadata: {
      namespace: options.namespace ?? 'app',
      name,
      ...(options.created === undefined ? {} : { creationTimestamp: options.created }),
      ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
    },
    spec: { rules, ...(options.tls === undefined ? {} : { tls: options.tls }) },
  });
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

const path = (p: string, pathType: string, service = 'web') => ({
  path: p,
  pathType,
  backend: { service: { name: service, port: { name: 'http' } } },
});

const rule = (host: string, ...paths: ReturnType<typeof path>[]) => ({ host, http: { paths } });

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
  more: Partial<ClusterSnapshot> = {},
): ClusterSnapshot {
  return {
    ingresses,
    services: new Map(
      ['app', 'team'].flatMap((namespace) =>
        ['web', 'other'].map(
          (name) =>
            [
              `${namespace}/${name}`,
              { namespace, name, ports: [{ name: 'http', port: 80 }] },
            ] as const,
        ),
      ),
    ),
    endpointSlices: new Map(),
    secrets: new Map(),
    fqdnNames: new Map(),
    endpointRules: anyRangeEndpointRules,
    ...more,
  };
}

const now = new Date('2026-11-29T12:00:00Z');

const tmp = mkdtempSync(join(tmpdir(), 'routing-model-'));
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** A Secret with a self-signed certificate made by openssl; `key` as `openssl genpkey` args. */
function tlsSecret(name: string, host: string, key: readonly string[]): SecretView {
  const dir = mkdtempSync(join(tmp, `${name}-`));
  execFileSync('openssl', ['genpkey', ...key, '-out', join(dir, 'tls.key')], { stdio: 'ignore' });
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-key', join(dir, 'tls.key'), '-out', join(dir, 'tls.crt')],
      ...['-days', '3', '-subj', `/CN=${host}`],
    ],
    { stdio: 'ignore' },
  );
  const data = (file: string) => readFileSync(join(dir, file)).toString('base64');
  return {
    namespace: 'app',
    name,
    data: { 'tls.crt': data('tls.crt'), 'tls.key': data('tls.key') },
  };
}

const p256 = ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'];

describe('buildRoutingModel', () => {
  it('orders map entries so Exact wins over Prefix and the longest prefix comes first', () => {
    const { model } = buildRoutingModel(
      snapshot([
        view('a', [
          rule(
            'a.example.com',
            path('/', 'Prefix'),
            path('/api/', 'Prefix'),
            path('/api', 'Exact'),
          ),
        ]),
      ]),
      { now },
    );
    expect(model.exactMap).toEqual([
      { key: 'a.example.com/', backend: 'app:web:http' },
      { key: 'a.example.com/api', backend: 'app:web:http' },
    ]);
    expect(model.prefixMap.map((entry) => entry.key)).toEqual([
      'a.example.com/api/',
      'a.example.com/',
    ]);
  });

  describe('contested hosts and paths: the oldest Ingress keeps them', () => {
    // The victim is older; the newcomer's namespace sorts first, which decided it before.
    const victim = view('shop', [rule('shop.example.com', path('/', 'Prefix'))], {
      namespace: 'team',
      created: '2026-01-01T00:00:00Z',
    });
    const newcomer = view(
      'grab',
      [rule('shop.example.com', path('/', 'Prefix', 'other'), path('/own', 'Prefix', 'other'))],
      { namespace: 'app', created: '2026-06-01T00:00:00Z' },
    );
    // The same, in the victim's namespace: Ingresses of one namespace share their hosts.
    const colleague = view(
      'grab',
      [rule('shop.example.com', path('/', 'Prefix', 'other'), path('/own', 'Prefix', 'other'))],
      { namespace: 'team', created: '2026-06-01T00:00:00Z' },
    );

    it('serves the older Ingress, whatever order the Ingresses arrive in', () => {
      const one = buildRoutingModel(snapshot([victim, colleague]), { now });
      const two = buildRoutingModel(snapshot([colleague, victim]), { now });
      expect(JSON.stringify(one)).toBe(JSON.stringify(two));
      expect(one.model.routes.map((route) => `${route.path} ${route.ingress}`)).toEqual([
        '/own team/grab',
        '/ team/shop',
      ]);
    });

    it('leaves out only the conflicting path of the newer Ingress of the namespace, with one Event naming the holder and the fix', () => {
      const result = buildRoutingModel(snapshot([victim, colleague]), { now });
      expect(result.excluded).toEqual([]);
      expect(result.model.ingresses.map((ingress) => ingress.name)).toEqual(['grab', 'shop']);
      expect(ingressEvents(result)).toEqual([
        {
          namespace: 'team',
          name: 'grab',
          reason: 'IngressConflict',
          message:
            'Ingress team/grab claims host shop.example.com, Prefix path / in spec.rules[0].http.paths[0], which Ingress team/shop (created earlier) already serves; that path is left out and the rest of team/grab is served. Use another host or path, or remove it from team/shop first.',
        },
      ]);
      expect(ingressStates(result)).toEqual({ served: 1, conflicting: 1, excluded: 0 });
    });

    it('leaves a host another namespace named first out of the newer Ingress, longer paths and Exact ones too, whatever order they arrive in', () => {
      const exact = view('exact', [rule('shop.example.com', path('/', 'Exact', 'other'))], {
        namespace: 'app',
        created: '2026-07-01T00:00:00Z',
      });
      const one = buildRoutingModel(snapshot([victim, newcomer, exact]), { now });
      const two = buildRoutingModel(snapshot([exact, newcomer, victim]), { now });
      expect(JSON.stringify(one)).toBe(JSON.stringify(two));
      expect(one.model.routes.map((route) => `${route.path} ${route.ingress}`)).toEqual([
        '/ team/shop',
      ]);
      expect(one.model.exactMap).toEqual([{ key: 'shop.example.com/', backend: 'team:web:http' }]);
      expect(ingressEvents(one)).toEqual([
        expect.objectContaining({ namespace: 'app', name: 'grab', reason: 'HostConflict' }),
        {
          namespace: 'app',
          name: 'exact',
          reason: 'HostConflict',
          message:
            'Ingress app/exact names host shop.example.com in spec.rules[0].http.paths[0], which namespace team owns (Ingress team/shop named it first); its rules and TLS hosts for it are left out and the rest of app/exact is served. Use another host, or have team add app to the haproxy-haptic.org/host-shared-with annotation of team/shop.',
        },
      ]);
      expect(ingressStates(one)).toEqual({ served: 1, conflicting: 2, excluded: 0 });
    });

    it('serves another namespace on a host its owner shares, where the oldest claim of each path still wins', () => {
      for (const shares of ['app', 'web, app', '*']) {
        const shared = view('shop', [rule('shop.example.com', path('/', 'Prefix'))], {
          namespace: 'team',
          created: '2026-01-01T00:00:00Z',
          annotations: { 'haproxy-haptic.org/host-shared-with': shares },
        });
        const result = buildRoutingModel(snapshot([shared, newcomer]), { now });
        expect(result.model.routes.map((route) => `${route.path} ${route.ingress}`)).toEqual([
          '/own app/grab',
          '/ team/shop',
        ]);
        expect(result.warnings.map((warning) => warning.reason)).toEqual(['IngressConflict']);
      }
      const notUs = view('shop', [rule('shop.example.com', path('/', 'Prefix'))], {
        namespace: 'team',
        created: '2026-01-01T00:00:00Z',
        annotations: { 'haproxy-haptic.org/host-shared-with': 'web' },
      });
      const result = buildRoutingModel(snapshot([notUs, newcomer]), { now });
      expect(result.warnings.map((warning) => warning.reason)).toEqual(['HostConflict']);
    });

    it('hands a host to the next namespace that names it when its owner goes', () => {
      const result = buildRoutingModel(snapshot([newcomer]), { now });
      expect(result.model.routes.map((route) => `${route.path} ${route.ingress}`)).toEqual([
        '/own app/grab',
        '/ app/grab',
      ]);
      expect(result.warnings).toEqual([]);
    });

    it('excludes an Ingress whose sharing annotation names something that is not a namespace', () => {
      const bad = view('shop', [rule('shop.example.com', path('/', 'Prefix'))], {
        namespace: 'team',
        annotations: { 'haproxy-haptic.org/host-shared-with': 'app, Team_B' },
      });
      const result = buildRoutingModel(snapshot([bad]), { now });
      expect(result.excluded).toEqual([
        {
          namespace: 'team',
          name: 'shop',
          field: 'metadata.annotations["haproxy-haptic.org/host-shared-with"]',
          message:
            'Ingress team/shop has haproxy-haptic.org/host-shared-with naming "Team_B", which is not a namespace; list namespace names separated by commas, or * to share this Ingress\'s hosts with every namespace.',
        },
      ]);
    });

    it.each([
      ['a trailing slash on a Prefix path', path('/', 'Prefix'), path('//', 'Prefix'), true],
      [
        'ImplementationSpecific against Prefix',
        path('/', 'Prefix'),
        path('/', 'ImplementationSpecific'),
        true,
      ],
      [
        'Exact against Prefix on the same path (both served, Exact first)',
        path('/x', 'Prefix'),
        path('/x', 'Exact'),
        false,
      ],
      ['different paths', path('/a', 'Prefix'), path('/b', 'Prefix'), false],
    ])('%s', (_what, older, newer, conflict) => {
      const first = view('one', [rule('h.example.com', older)], {
        created: '2026-01-01T00:00:00Z',
      });
      const second = view('two', [rule('h.example.com', newer)], {
        created: '2026-01-02T00:00:00Z',
      });
      const result = buildRoutingModel(snapshot([second, first]), { now });
      expect(result.model.routes.length).toBe(conflict ? 1 : 2);
      expect(result.warnings.map((warning) => warning.reason)).toEqual(
        conflict ? ['IngressConflict'] : [],
      );
    });

    it('breaks equal ages by namespace then name, and counts an Ingress being created as the newest', () => {
      const same = '2026-01-01T00:00:00Z';
      const b = view('b', [rule('h.example.com', path('/', 'Prefix'))], { created: same });
      const a = view('a', [rule('h.example.com', path('/', 'Prefix'))], {
        namespace: 'team',
        created: same,
      });
      const fresh = view('0', [rule('h.example.com', path('/', 'Prefix'))], { namespace: 'aaa' });
      const result = buildRoutingModel(snapshot([fresh, a, b]), { now });
      expect(result.model.routes.map((route) => route.ingress)).toEqual(['app/b']);
      expect(result.warnings.map((warning) => warning.ingress)).toEqual(['team/a', 'aaa/0']);
    });

    it('serves a path written twice in one Ingress once, without a warning', () => {
      const twice = view('twice', [
        rule('h.example.com', path('/', 'Prefix'), path('/', 'Prefix', 'other')),
      ]);
      const result = buildRoutingModel(snapshot([twice]), { now });
      expect(result.model.routes.map((route) => route.backend)).toEqual(['app:web:http']);
      expect(result.warnings).toEqual([]);
    });
  });

  describe('endpoints', () => {
    const ingress = view('a', [rule('a.example.com', path('/', 'Prefix'))]);
    const serve = (slices: EndpointSliceView[], more: Partial<ClusterSnapshot> = {}) =>
      buildRoutingModel(
        snapshot([ingress], { endpointSlices: new Map([['app/web', slices]]), ...more }),
        {
          now,
        },
      );

    it('takes ready endpoints of matching families, and FQDN names as their resolved addresses', () => {
      const result = serve(
        [
          slice('IPv4', ['10.0.0.2', '::1', '10.0.0.1']),
          slice('IPv6', ['fd00::1']),
          slice('FQDN', ['db.example.com', 'pending.example.com', 'bad name']),
          slice('IPv4', ['10.0.0.9'], false),
        ],
        { fqdnNames: new Map([['db.example.com', { addresses: ['10.1.0.1', 'fd00::2'] }]]) },
      );
      expect(result.model.backends[0]?.servers.map((server) => server.endpoint)).toEqual([
        '10.0.0.1:8080',
        '10.0.0.2:8080',
        '10.1.0.1:8080',
        '[fd00::1]:8080',
        '[fd00::2]:8080',
      ]);
      expect(result.warnings).toEqual([]);
    });

    it('refuses loopback, link-local and unspecified addresses, written or resolved, with an Event naming the slice', () => {
      const result = serve(
        [
          slice('IPv4', ['169.254.169.254', '10.0.0.1']),
          slice('IPv6', ['fe80::1']),
          slice('FQDN', ['127.0.0.11', 'localhost.example', 'gone.example']),
        ],
        {
          fqdnNames: new Map([
            ['127.0.0.11', { addresses: ['127.0.0.11'] }],
            ['localhost.example', { addresses: ['::1', '0.0.0.0'] }],
            ['gone.example', { error: 'ENOTFOUND' }],
          ]),
        },
      );
      expect(result.model.backends[0]?.servers.map((server) => server.endpoint)).toEqual([
        '10.0.0.1:8080',
      ]);
      const [event] = ingressEvents(result);
      expect(event?.reason).toBe('EndpointRefused');
      for (const text of [
        'EndpointSlice app/web-IPv4 of Service app/web lists 169.254.169.254, a link-local address',
        'EndpointSlice app/web-IPv6 of Service app/web lists fe80::1, a link-local address',
        // One sentence per slice and reason, naming the addresses.
        'EndpointSlice app/web-FQDN of Service app/web lists 127.0.0.11, ::1 (localhost.example resolves to it), a loopback address',
        'lists 0.0.0.0 (localhost.example resolves to it), an unspecified address',
        'names gone.example, which does not resolve (ENOTFOUND)',
      ]) {
        expect(event?.message).toContain(text);
      }
    });

    it('serves at most maxServersPerBackend endpoints of a Service, the first in address order, and says so', () => {
      // Two slices of 1,000 endpoints of 100 addresses each, as the API allows them.
      const many = (first: number): EndpointSliceView => ({
        ...slice('IPv4', []),
        name: `web-many-${String(first)}`,
        endpoints: Array.from({ length: 1_000 }, (_, e) => ({
          ready: true,
          addresses: Array.from({ length: 100 }, (_, a) => {
            const n = e * 100 + a;
            return `10.${String(first + (n >> 16))}.${String((n >> 8) & 255)}.${String(n & 255)}`;
          }),
        })),
      });
      const result = serve([many(0), many(4)]);
      const servers = result.model.backends[0]?.servers ?? [];
      expect(servers).toHaveLength(maxServersPerBackend);
      expect(servers[0]?.endpoint).toBe('10.0.0.0:8080');
      expect(result.model.backends[0]?.slots).toHaveLength(2 * maxServersPerBackend);
      expect(result.warnings).toEqual([
        expect.objectContaining({
          ingress: 'app/a',
          reason: 'EndpointRefused',
          message: expect.stringContaining(
            `Service app/web has 200000 ready endpoints for port http, more than the ${String(maxServersPerBackend)} one backend serves`,
          ) as unknown,
        }),
      ]);
    });

    it('refuses every FQDN endpoint when FQDN slices are turned off', () => {
      const result = serve([slice('FQDN', ['db.example.com']), slice('IPv4', ['10.0.0.1'])], {
        fqdnNames: 'disabled',
      });
      expect(result.model.backends[0]?.servers.map((server) => server.endpoint)).toEqual([
        '10.0.0.1:8080',
      ]);
      expect(result.warnings).toEqual([
        {
          ingress: 'app/a',
          reason: 'EndpointRefused',
          message:
            'EndpointSlice app/web-FQDN of Service app/web is of type FQDN, and this controller serves no FQDN endpoints (--fqdn-endpoints=false); its endpoints are left out. List IP addresses in an IPv4 or IPv6 EndpointSlice instead.',
        },
      ]);
    });

    describe("under the cluster's endpoint rules", () => {
      const endpointRules: EndpointRules = {
        ownPods: [{ name: 'haptic/haptic-haproxy-7d9-abcde', addresses: ['10.244.254.10'] }],
        podCIDRs: ['10.244.0.0/16'],
        podCIDRsFrom: 'nodes',
        allowedCIDRs: [],
      };

      it("leaves out an HAProxy Pod's address, a NAT64 form of loopback and an address outside the Pod CIDR, and serves the rest", () => {
        const result = serve(
          [
            slice('IPv4', ['10.244.254.10', '10.244.0.7', '203.0.113.7']),
            slice('IPv6', ['64:ff9b::7f00:1']),
            slice('FQDN', ['db.example.com']),
          ],
          {
            endpointRules,
            fqdnNames: new Map([['db.example.com', { addresses: ['10.244.0.8', '10.96.0.1'] }]]),
          },
        );
        expect(result.model.backends[0]?.servers.map((server) => server.endpoint)).toEqual([
          '10.244.0.7:8080',
          '10.244.0.8:8080',
        ]);
        expect(result.warnings.map((warning) => warning.message)).toEqual([
          "EndpointSlice app/web-IPv4 of Service app/web lists 10.244.254.10, the address of Pod haptic/haptic-haproxy-7d9-abcde, one of the ingress controller's own Pods (HAProxy or its controller), so requests sent there would come back into HAProxy; HAProxy does not send traffic there. List the addresses of the Service's real endpoints.",
          "EndpointSlice app/web-IPv4 of Service app/web lists 203.0.113.7, outside the cluster's Pod CIDRs (10.244.0.0/16, from the Nodes' spec.podCIDRs); HAProxy does not send traffic there. List the addresses of the Service's Pods; for addresses elsewhere (the Service range, host-network Pods, hosts outside the cluster) the cluster operator adds their range to controller.endpoints.allowedCIDRs.",
          "EndpointSlice app/web-IPv6 of Service app/web lists 64:ff9b::7f00:1, a NAT64 address (64:ff9b::/96) that carries 127.0.0.1, a loopback address (the HAProxy host itself); HAProxy does not send traffic there. List the addresses of the Service's real endpoints.",
          "EndpointSlice app/web-FQDN of Service app/web lists 10.96.0.1 (db.example.com resolves to it), outside the cluster's Pod CIDRs (10.244.0.0/16, from the Nodes' spec.podCIDRs); HAProxy does not send traffic there. List the addresses of the Service's Pods; for addresses elsewhere (the Service range, host-network Pods, hosts outside the cluster) the cluster operator adds their range to controller.endpoints.allowedCIDRs.",
        ]);
        expect(ingressEvents(result)).toEqual([
          expect.objectContaining({ namespace: 'app', name: 'a', reason: 'EndpointRefused' }),
        ]);
      });

      it('names three refused addresses of a slice for one reason and counts the rest', () => {
        const outside = Array.from(
          { length: 1_000 },
          (_, i) => `203.0.${String(i >> 8)}.${String(i & 255)}`,
        );
        const result = serve([slice('IPv4', ['10.244.0.7', ...outside])], { endpointRules });
        expect(result.model.backends[0]?.servers).toHaveLength(1);
        expect(result.warnings.map((warning) => warning.message)).toEqual([
          expect.stringMatching(
            /^EndpointSlice app\/web-IPv4 of Service app\/web lists 203\.0\.0\.0, 203\.0\.0\.1, 203\.0\.0\.2 and 997 more addresses, outside the cluster's Pod CIDRs /,
          ),
        ]);
      });

      it('rebuilds a kept backend when only the rules change', () => {
        const keptBackends = new KeptBackends();
        const slices = new Map([['app/web', [slice('IPv4', ['10.244.254.10', '10.244.0.7'])]]]);
        const build = (rules: EndpointRules) =>
          buildRoutingModel(snapshot([ingress], { endpointSlices: slices, endpointRules: rules }), {
            now,
            keptBackends,
          }).model.backends[0]?.servers.map((server) => server.address);
        expect(build({ ...endpointRules, ownPods: [] })).toEqual(['10.244.0.7', '10.244.254.10']);
        expect(build(endpointRules)).toEqual(['10.244.0.7']);
      });
    });
  });

  describe('TLS', () => {
    const good = tlsSecret('good', 'a.example.com', p256);
    const weak = tlsSecret('weak', 'b.example.com', [
      '-algorithm',
      'RSA',
      '-pkeyopt',
      'rsa_keygen_bits:1024',
    ]);
    const secrets = new Map([
      ['app/good', good],
      ['app/weak', weak],
    ]);

    it('serves an Ingress whose Secret is missing or unusable, its hosts on the default certificate, with an Event naming the Secret, the key and the fix', () => {
      const missing = view('a', [rule('a.example.com', path('/', 'Prefix'))], {
        tls: [{ hosts: ['a.example.com'], secretName: 'nope' }],
      });
      const broken = view('b', [rule('b.example.com', path('/', 'Prefix'))], {
        tls: [{ hosts: ['b.example.com'], secretName: 'weak' }],
      });
      const result = buildRoutingModel(snapshot([missing, broken], { secrets }), { now });
      expect(result.model.ingresses.map((ingress) => ingress.name)).toEqual(['a', 'b']);
      expect(result.model.routes).toHaveLength(2);
      expect(result.model.certificates).toEqual([]);
      expect([...result.files.keys()]).toEqual([]);
      expect(ingressEvents(result)).toEqual([
        expect.objectContaining({
          name: 'a',
          reason: 'TLSSecretMissing',
          message: expect.stringContaining(
            'names the TLS Secret app/nope, which does not exist',
          ) as unknown,
        }),
        expect.objectContaining({
          name: 'b',
          reason: 'TLSSecretInvalid',
          message: expect.stringMatching(
            /default certificate for b\.example\.com: Secret app\/weak: tls\.key is an RSA key of 1024 bits, which HAProxy does not load here; issue the certificate with an ECDSA P-256 key/,
          ) as unknown,
        }),
      ]);
    });

    it('checks a Secret’s expiry at every build, though it decodes the Secret once: served before, on the default certificate after', () => {
      const ingress = view('a', [rule('a.example.com', path('/', 'Prefix'))], {
        tls: [{ hosts: ['a.example.com'], secretName: 'good' }],
      });
      const state = snapshot([ingress], { secrets });
      const before = buildRoutingModel(state, { now });
      expect(before.model.certificates.map((certificate) => certificate.secret)).toEqual([
        'app/good',
      ]);
      const after = buildRoutingModel(state, { now: new Date(now.getTime() + 30 * 86_400_000) });
      expect(after.model.certificates).toEqual([]);
      expect(after.files.size).toBe(0);
      expect(ingressEvents(after)).toEqual([
        expect.objectContaining({
          name: 'a',
          reason: 'TLSSecretInvalid',
          message: expect.stringMatching(
            /default certificate for a\.example\.com: Secret app\/good: the certificate expired at \d{4}-/,
          ) as unknown,
        }),
      ]);
      const again = buildRoutingModel(state, { now });
      expect([...again.files.entries()]).toEqual([...before.files.entries()]);
    });

    it('gives a TLS host to the oldest Ingress naming it; a newer one with another certificate loses that host only', () => {
      const other = { ...tlsSecret('other', 'a.example.com', p256), namespace: 'team' };
      // Shared with team, so the rival's TLS host is contested rather than left out whole.
      const owner = view('owner', [rule('a.example.com', path('/', 'Prefix'))], {
        created: '2026-01-01T00:00:00Z',
        tls: [{ hosts: ['a.example.com'], secretName: 'good' }],
        annotations: { 'haproxy-haptic.org/host-shared-with': 'team' },
      });
      const rival = view('rival', [rule('c.example.com', path('/', 'Prefix', 'other'))], {
        namespace: 'team',
        created: '2026-02-01T00:00:00Z',
        tls: [{ hosts: ['a.example.com', 'c.example.com'], secretName: 'other' }],
      });
      const result = buildRoutingModel(
        snapshot([rival, owner], { secrets: new Map([...secrets, ['team/other', other]]) }),
        { now },
      );
      expect(result.model.certificates).toEqual([
        { file: 'ssl/app_good.pem', secret: 'app/good', hosts: ['a.example.com'] },
        { file: 'ssl/team_other.pem', secret: 'team/other', hosts: ['c.example.com'] },
      ]);
      expect(ingressEvents(result)).toEqual([
        expect.objectContaining({
          name: 'rival',
          reason: 'IngressConflict',
          message: expect.stringContaining(
            'names the TLS host a.example.com in spec.tls[0], which Ingress app/owner (created earlier) already names with another certificate',
          ) as unknown,
        }),
      ]);
    });

    it('serves a TLS entry without hosts for the rule hosts only, and shares one Secret between Ingresses of its namespace', () => {
      const one = view('one', [rule('a.example.com', path('/', 'Prefix'))], {
        tls: [{ secretName: 'good' }],
      });
      const two = view('two', [rule('z.example.com', path('/', 'Prefix', 'other'))], {
        tls: [{ hosts: ['z.example.com'], secretName: 'good' }],
      });
      const lone = view('lone', [], { tls: [{ secretName: 'good' }] });
      const result = buildRoutingModel(snapshot([one, two, lone], { secrets }), { now });
      expect(result.model.certificates).toEqual([
        { file: 'ssl/app_good.pem', secret: 'app/good', hosts: ['a.example.com', 'z.example.com'] },
      ]);
      expect(result.warnings).toEqual([
        expect.objectContaining({ ingress: 'app/lone', reason: 'TLSHostsMissing' }),
      ]);
    });
  });

  describe('annotations', () => {
    const nginx = (name: string) => `nginx.ingress.kubernetes.io/${name}`;
    const regex = { [nginx('use-regex')]: 'true' };

    it('lists regex routes in regexMap, longest key first, each path in a group after its host as a literal', () => {
      const result = buildRoutingModel(
        snapshot([
          view(
            'a',
            [rule('a.example.com', path('/app(/|$)(.*)', 'Prefix'), path('/a|/b', 'Exact'))],
            {
              annotations: regex,
            },
          ),
          view('wild', [rule('*.example.com', path('/w(.*)', 'Prefix'))], { annotations: regex }),
          view('nohost', [{ http: { paths: [path('/x.*', 'Prefix')] } }], { annotations: regex }),
          view('plain', [rule('a.example.com', path('/api', 'Prefix'))]),
        ]),
        { now },
      );
      expect(result.model.regexMap).toEqual([
        { key: '(?i)^a\\.example\\.com(?=/)(?:/app(/|$)(.*))', backend: 'app:web:http' },
        { key: '(?i)^\\*\\.example\\.com(?=/)(?:/w(.*))', backend: 'app:web:http' },
        { key: '(?i)^a\\.example\\.com(?=/)(?:/a|/b)', backend: 'app:web:http' },
        { key: '(?i)^\\*(?=/)(?:/x.*)', backend: 'app:web:http' },
      ]);
      // Regex routes are in no other map; use-regex alone asks no backend of its own.
      expect(result.model.exactMap).toEqual([
        { key: 'a.example.com/api', backend: 'app:web:http' },
      ]);
      expect(result.model.prefixMap.map((entry) => entry.key)).toContain('a.example.com/api/');
      expect(result.model.prefixMap.map((entry) => entry.key).join(' ')).not.toMatch(/[(|]|\/x/);
      expect(result.model.backends.map((backend) => backend.name)).toEqual(['app:web:http']);
      expect(result.model.routes.filter((route) => route.pathType === 'Regex')).toHaveLength(4);
    });

    it.each([
      ['a.example.com/app/x', '(?i)^a\\.example\\.com(?=/)(?:/app(/|$)(.*))'],
      ['A.EXAMPLE.COM/APP', '(?i)^a\\.example\\.com(?=/)(?:/app(/|$)(.*))'],
      ['a.example.com/b', '(?i)^a\\.example\\.com(?=/)(?:/a|/b)'],
      ['aXexample.com/app', undefined],
      ['evil.example.org/b', undefined],
      ['evil.example.org/a.example.com/b', undefined],
      ['a.example.com.evil.org/app', undefined],
      ['*/x', '(?i)^\\*(?=/)(?:/x.*)'],
      ['b.example.com/x', undefined],
    ])('matches the request key %j by %s (undefined: by no regex route)', (key, expected) => {
      const result = buildRoutingModel(
        snapshot([
          view(
            'a',
            [rule('a.example.com', path('/app(/|$)(.*)', 'Prefix'), path('/a|/b', 'Exact'))],
            {
              annotations: regex,
            },
          ),
          view('nohost', [{ http: { paths: [path('/x.*', 'Prefix')] } }], { annotations: regex }),
        ]),
        { now },
      );
      // As HAProxy's map_reg reads the map: the first key matching, (?i) as the i flag.
      const found = result.model.regexMap.find((entry) =>
        new RegExp(entry.key.replace(/^\(\?i\)/, ''), 'i').test(key),
      );
      expect(found?.key).toBe(expected);
    });

    it.each([
      [
        'makes the "/" optional',
        'a.example.com',
        '/?\\.victim\\.org/.*',
        'a.example.com.victim.org/anything',
      ],
      ['has an alternative without "/"', 'a.example.com', '/x|puter/.*', 'a.example.computer/x'],
      [
        'has no host and makes the "/" optional (the wildcard step)',
        '',
        '/?\\.example\\.com/.*',
        '*.example.com/cart',
      ],
      ['has no host and an alternative without "/"', '', '/none|.*', '*.example.com/'],
    ])(
      'gives no request key of another host to a regex path that %s',
      (_what, host, regexPath, otherHostKey) => {
        const attacker = view(
          'attacker',
          [
            host === ''
              ? { http: { paths: [path(regexPath, 'Prefix')] } }
              : rule(host, path(regexPath, 'Prefix')),
          ],
          { namespace: 'team', annotations: regex },
        );
        const result = buildRoutingModel(snapshot([attacker]), { now });
        expect(result.model.regexMap).toHaveLength(1);
        // HAProxy's map_reg, as the default template asks it before the other host's prefixes.
        const found = result.model.regexMap.find((entry) =>
          new RegExp(entry.key.replace(/^\(\?i\)/, ''), 'i').test(otherHostKey),
        );
        expect(found).toBeUndefined();
      },
    );

    describe('backend variants', () => {
      const slices = new Map([['app/web', [slice('IPv4', ['10.0.0.1', '10.0.0.2', '10.0.0.3'])]]]);
      const build = (ingresses: ReturnType<typeof view>[]) =>
        buildRoutingModel(snapshot(ingresses, { endpointSlices: slices }), { now });

      it('gives two Ingresses of one Service with different options two backends of the same slots, and one with the same options', () => {
        const result = build([
          view('big', [rule('a.example.com', path('/', 'Prefix'))], {
            annotations: { [nginx('proxy-body-size')]: '8m' },
          }),
          view('slow', [rule('b.example.com', path('/', 'Prefix'))], {
            annotations: { [nginx('proxy-read-timeout')]: '120' },
          }),
          view('big2', [rule('c.example.com', path('/', 'Prefix'))], {
            annotations: { [nginx('proxy-body-size')]: '8M' },
          }),
          view('plain', [rule('d.example.com', path('/', 'Prefix'))]),
        ]);
        const { backends, routes } = result.model;
        expect(backends).toHaveLength(3);
        const [plain, ...variants] = backends;
        expect(plain?.name).toBe('app:web:http');
        for (const variant of variants) {
          expect(variant.name).toMatch(/^app:web:http:[0-9a-f]{16}$/);
          expect(variant.slots).toEqual(plain?.slots);
          expect(variant.servers).toEqual(plain?.servers);
        }
        const byHost = Object.fromEntries(routes.map((route) => [route.host, route.backend]));
        expect(byHost['a.example.com']).toBe(byHost['c.example.com']);
        expect(new Set(Object.values(byHost)).size).toBe(3);
        const big = backends.find((backend) => backend.name === byHost['a.example.com']);
        const slow = backends.find((backend) => backend.name === byHost['b.example.com']);
        expect(big?.options).toMatchObject({ maxBodyBytes: 8 * 1024 ** 2, serverTimeout: null });
        expect(slow?.options).toMatchObject({ maxBodyBytes: 1024 ** 2, serverTimeout: '120s' });
        expect(plain?.options.key).toBe('');
      });

      it('keeps the oldest claim of a path whatever options the newer Ingress asks', () => {
        const older = view('older', [rule('a.example.com', path('/', 'Prefix'))], {
          created: '2026-01-01T00:00:00Z',
        });
        const newer = view('newer', [rule('a.example.com', path('/', 'Prefix'))], {
          created: '2026-02-01T00:00:00Z',
          annotations: { [nginx('whitelist-source-range')]: '10.0.0.0/8' },
        });
        const result = build([newer, older]);
        expect(result.model.routes.map((route) => route.backend)).toEqual(['app:web:http']);
        expect(result.model.backends.map((backend) => backend.name)).toEqual(['app:web:http']);
        expect(result.warnings.map((warning) => warning.reason)).toEqual(['IngressConflict']);
      });
    });
  });

  describe('an edited build', () => {
    const tls = tlsSecret('tls', 'x.example.com', p256);
    const nginx = (name: string) => `nginx.ingress.kubernetes.io/${name}`;

    const annotations = fc.record({
      useRegex: fc.constantFrom(undefined, 'true', 'false'),
      rewriteTarget: fc.constantFrom(undefined, undefined, '/$1', '/$3', '/'),
      bodySize: fc.constantFrom(undefined, '8m', '0', 'huge'),
      allow: fc.constantFrom(undefined, '10.0.0.0/8', '10.0.0.0/8,192.0.2.7', 'not a range'),
      timeout: fc.constantFrom(undefined, '120', '5s'),
      sslRedirect: fc.constantFrom(undefined, 'false'),
      refused: fc.constantFrom(undefined, undefined, undefined, 'configuration-snippet'),
      ignored: fc.constantFrom(undefined, 'mirror-target'),
      canary: fc.constantFrom(undefined, undefined, 'true'),
      canaryWeight: fc.constantFrom(undefined, '20'),
      canaryHeader: fc.constantFrom(undefined, 'x-canary'),
    });

    const ingressObject = fc.record({
      namespace: fc.constantFrom('app', 'team'),
      name: fc.constantFrom('one', 'two', 'three', 'four'),
      created: fc.constantFrom('2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z', undefined),
      host: fc.constantFrom('x.example.com', 'y.example.com', '*.example.com', ''),
      paths: fc.array(
        fc.record({
          path: fc.constantFrom('/', '/api', '/v1/', '/app(/|$)(.*)', '/a|/b', '/(x', 'bad'),
          pathType: fc.constantFrom('Prefix', 'Exact'),
          service: fc.constantFrom('web', 'other', 'gone'),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      tls: fc.constantFrom(undefined, 'tls', 'missing'),
      annotations,
    });
    type IngressObject = typeof ingressObject extends fc.Arbitrary<infer T> ? T : never;

    function annotationsOf(object: IngressObject): Record<string, string> {
      const a = object.annotations;
      const set: [string, string | undefined][] = [
        [nginx('use-regex'), a.useRegex],
        [nginx('rewrite-target'), a.rewriteTarget],
        [nginx('proxy-body-size'), a.bodySize],
        [nginx('whitelist-source-range'), a.allow],
        [nginx('proxy-read-timeout'), a.timeout],
        [nginx('ssl-redirect'), a.sslRedirect],
        [nginx(a.refused ?? 'none'), a.refused === undefined ? undefined : 'x'],
        [nginx(a.ignored ?? 'none'), a.ignored === undefined ? undefined : 'x'],
        [nginx('canary'), a.canary],
        [nginx('canary-weight'), a.canaryWeight],
        [nginx('canary-by-header'), a.canaryHeader],
      ];
      return Object.fromEntries(
        set.filter((entry): entry is [string, string] => entry[1] !== undefined),
      );
    }

    /** A canary mostly asks for the host and path of its namespace's filler primary. */
    const aimed = (object: IngressObject): boolean =>
      object.annotations.canary !== undefined && object.name !== 'four';

    function pathsOf(object: IngressObject): IngressObject['paths'] {
      if (!aimed(object)) return object.paths;
      return [{ path: '/', pathType: 'Prefix', service: object.paths[0]?.service ?? 'web' }];
    }

    function hostOf(object: IngressObject): string {
      if (!aimed(object)) return object.host;
      return object.namespace === 'app' ? 'x.example.com' : 'y.example.com';
    }

    function viewOf(object: IngressObject) {
      const parsed = readIngress({
        kind: 'Ingress',
        metadata: {
          namespace: object.namespace,
          name: object.name,
          ...(object.created === undefined ? {} : { creationTimestamp: object.created }),
          annotations: annotationsOf(object),
        },
        spec: {
          ...(object.tls === undefined
            ? {}
            : { tls: [{ hosts: [object.host || 'x.example.com'], secretName: object.tls }] }),
          rules: [
            {
              ...(hostOf(object) === '' ? {} : { host: hostOf(object) }),
              http: { paths: pathsOf(object).map((p) => path(p.path, p.pathType, p.service)) },
            },
          ],
        },
      });
      if (typeof parsed === 'string') throw new Error(parsed);
      return parsed;
    }

    /** Ingresses of hosts of their own, some with options and regex paths, to merge into. */
    const filler = [
      view('primary', [rule('x.example.com', path('/', 'Prefix'))], {
        created: '2025-01-01T00:00:00Z',
      }),
      view('secondary', [rule('y.example.com', path('/', 'Prefix'))], {
        namespace: 'team',
        created: '2025-01-01T00:00:00Z',
      }),
    ].concat(
      Array.from({ length: 24 }, (_, i) =>
        view(
          `f${String(i)}`,
          [
            rule(
              `f${String(i % 20)}.example.com`,
              path(i % 3 === 0 ? '/' : `/p${String(i)}(.*)`, 'Prefix'),
            ),
          ],
          {
            namespace: 'fill',
            created: `2026-01-${String((i % 28) + 1).padStart(2, '0')}T00:00:00Z`,
            annotations:
              i % 3 === 0
                ? { [nginx('proxy-body-size')]: `${String(i)}m` }
                : { [nginx('use-regex')]: 'true', [nginx('rewrite-target')]: '/$1' },
          },
        ),
      ),
    );

    const operation = fc.oneof(
      fc.record({ kind: fc.constant('write' as const), object: ingressObject }),
      fc.record({ kind: fc.constant('delete' as const), object: ingressObject }),
    );

    it('builds the model a build from nothing builds, as Ingresses with annotations and regex paths come and go', () => {
      const services = new Map(
        ['app', 'team', 'fill'].flatMap((namespace) =>
          ['web', 'other'].map(
            (name) =>
              [
                `${namespace}/${name}`,
                { namespace, name, ports: [{ name: 'http', port: 80 }] },
              ] as const,
          ),
        ),
      );
      const base = snapshot([], {
        services,
        secrets: new Map([
          ['app/tls', tls],
          ['team/tls', { ...tls, namespace: 'team' }],
        ]),
        endpointSlices: new Map([
          ['app/web', [slice('IPv4', ['10.0.0.1', '10.0.0.2'])]],
          ['fill/web', [{ ...slice('IPv4', ['10.0.3.1']), namespace: 'fill' }]],
        ]),
      });
      let annotated = 0;
      let regexRoutes = 0;
      let variants = 0;
      let canaries = 0;
      let canaryRoutes = 0;
      fc.assert(
        fc.property(
          fc.array(ingressObject, { maxLength: 6 }),
          fc.array(operation, { minLength: 1, maxLength: 10 }),
          fc.boolean(),
          (initial, operations, endpointsChange) => {
            const kept = { keptModel: new KeptModel(), keptBackends: new KeptBackends() };
            const ingresses = new Map(filler.map((v) => [`${v.namespace}/${v.name}`, v]));
            const put = (object: IngressObject): void => {
              ingresses.set(`${object.namespace}/${object.name}`, viewOf(object));
            };
            initial.forEach(put);
            let endpointSlices = base.endpointSlices;
            for (const [i, step] of operations.entries()) {
              if (step.kind === 'write') put(step.object);
              else ingresses.delete(`${step.object.namespace}/${step.object.name}`);
              if (endpointsChange && i % 3 === 2) {
                endpointSlices = new Map([
                  ...endpointSlices,
                  [
                    'app/other',
                    [{ ...slice('IPv4', [`10.0.2.${String(i)}`]), serviceName: 'other' }],
                  ],
                ]);
              }
              const state: ClusterSnapshot = {
                ...base,
                endpointSlices,
                ingresses: [...ingresses.values()],
              };
              const edited = buildRoutingModel(state, { now, ...kept });
              expect(edited).toEqual(buildRoutingModel(state, { now }));
              if (step.kind === 'write' && Object.keys(annotationsOf(step.object)).length > 0) {
                annotated += 1;
              }
              regexRoutes += edited.model.regexMap.length;
              variants += edited.model.backends.filter((b) => b.options.key !== '').length;
              canaries += edited.model.canaries.length;
              canaryRoutes += edited.model.routes.filter((r) => r.canary).length;
            }
          },
        ),
        { numRuns: 150 },
      );
      // The runs did build what they are about.
      expect(annotated).toBeGreaterThan(50);
      expect(regexRoutes).toBeGreaterThan(100);
      expect(variants).toBeGreaterThan(100);
      expect(canaries).toBeGreaterThan(20);
      // Some canaries found no primary (another namespace's, a path of their own).
      expect(canaryRoutes).toBeGreaterThan(canaries);
    });
  });
});
