/**
 * Tenants sharing the chart's HAProxy cannot hurt each other through the routing model:
 * - a host takeover from another namespace (whose name sorts first, which decided it before),
 *   with the same path, a longer one or an Exact one, leaves the older namespace serving the
 *   whole host, gives the newer Ingress a HostConflict Event, serves the rest of it, and is
 *   denied by the controller's webhook once registered, until the owner shares the host;
 * - a wildcard host of another namespace does not receive the paths a served host leaves
 *   unrouted (an ACME HTTP-01 challenge among them): they are answered 404;
 * - a namespace over its server-slot budget loses its newest backend's endpoints (503, with a
 *   BudgetExceeded Event), and every other backend, its own older ones included, is served;
 * - an FQDN EndpointSlice naming a loopback host (HAProxy's own: the agent's port) is refused
 *   with an Event, and HAProxy never proxies there;
 * - an EndpointSlice naming an HAProxy Pod's own address (which looped each request ~100 times
 *   through HAProxy), a controller Pod's, a NAT64 form of 127.0.0.1 or an address outside the
 *   node's Pod CIDR is refused with an Event, and the Service's other endpoint serves every
 *   request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { type Backend, LocalSite, eventually } from './local-site.ts';

let site: LocalSite;
/** The other tenant: a namespace whose name sorts before the site's. */
let rival: string;
let beta: Backend;

function route(host: string, path: string, service: string, pathType = 'Prefix') {
  return {
    host,
    http: {
      paths: [{ path, pathType, backend: { service: { name: service, port: { number: 80 } } } }],
    },
  };
}

function ingressIn(
  namespace: string,
  name: string,
  rules: readonly Record<string, unknown>[],
  annotations: Readonly<Record<string, string>> = {},
) {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace, annotations },
    spec: { ingressClassName: site.ingressClass, rules },
  };
}

/**
 * The owner's Ingress: shop.example.com over HTTP (no redirect to HTTPS, so both schemes
 * reach the routes) and HTTPS (its own certificate), served by alpha.
 */
function shopIngress(annotations: Readonly<Record<string, string>> = {}) {
  const ingress = ingressIn(site.namespace, 'shop', [route('shop.example.com', '/', 'alpha')], {
    'nginx.ingress.kubernetes.io/ssl-redirect': 'false',
    ...annotations,
  });
  return {
    ...ingress,
    spec: { ...ingress.spec, tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] },
  };
}

/** The Warning Events of one object, as `reason: message` lines. */
async function eventsOf(namespace: string, name: string): Promise<string> {
  const result = await kubectl([
    ...['get', 'events', '-n', namespace, '--field-selector', `involvedObject.name=${name}`],
    ...['-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}'],
  ]);
  return result.stdout;
}

function dryRun(object: Record<string, unknown>) {
  return kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(object));
}

beforeAll(async () => {
  // A small server-slot budget per namespace, so one tenant can go over it with one Service.
  site = await LocalSite.start('ctl-ten', {
    values: ['--set', 'controller.budgets.serverSlotsPerNamespace=64'],
  });
  await site.addBackend('alpha');
  beta = await site.addBackend('beta');
  rival = await createTestNamespace('a-rival');
  // The rival's own Service, backed by the beta test host.
  await site.apply({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'beta', namespace: rival },
    spec: { ports: [{ name: 'http', port: 80, targetPort: beta.port }], clusterIP: 'None' },
  });
  await site.apply({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'beta-1',
      namespace: rival,
      labels: { 'kubernetes.io/service-name': 'beta' },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: beta.port, protocol: 'TCP' }],
    endpoints: [{ addresses: [beta.address], conditions: { ready: true } }],
  });
}, 180_000);

afterAll(async () => {
  await kubectl(['delete', 'namespace', rival, '--wait=false']);
  await site.stop();
});

describe('tenant isolation in the routing model', () => {
  it("leaves out the newest backend of a namespace over its server-slot budget, with an Event, and serves everyone else's", async () => {
    await site.apply(ingressIn(rival, 'steady', [route('steady.example.com', '/', 'beta')]));
    await eventually(
      "the rival's older backend served",
      () => site.everywhere('steady.example.com', '/', ['http']),
      (answers) => answers.every((answer) => answer === '200 beta /'),
    );
    // Budgets leave out the newest Ingress's backend, and Ingresses created in the same second
    // are ordered by name ('many' before 'steady'): 'many' must be created a second later.
    const steadyCreated = Date.parse(
      (
        await kubectl([
          ...['get', 'ingress', 'steady', '-n', rival],
          ...['-o', 'jsonpath={.metadata.creationTimestamp}'],
        ])
      ).stdout,
    );
    await eventually(
      "a second after the rival's older Ingress was created",
      () => Promise.resolve(Date.now()),
      (now) => now >= steadyCreated + 1_100,
      3_000,
    );
    // 100 endpoints take 128 server slots, over the namespace's 64.
    const prefix = beta.address.split('.').slice(0, 3).join('.');
    const addresses = Array.from({ length: 100 }, (_, i) => `${prefix}.${String(i + 100)}`);
    await site.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'many', namespace: rival },
      spec: { ports: [{ name: 'http', port: 80, targetPort: beta.port }], clusterIP: 'None' },
    });
    await site.apply({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'many-1',
        namespace: rival,
        labels: { 'kubernetes.io/service-name': 'many' },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: beta.port, protocol: 'TCP' }],
      endpoints: addresses.map((address) => ({
        addresses: [address],
        conditions: { ready: true },
      })),
    });
    await site.apply(ingressIn(rival, 'many', [route('many.example.com', '/', 'many')]));
    const events = await eventually(
      'BudgetExceeded Event on the newest Ingress',
      () => eventsOf(rival, 'many'),
      (text) => text.includes('BudgetExceeded'),
    );
    expect(events).toContain(
      `BudgetExceeded: Ingress ${rival}/many routes to Service ${rival}/many, whose 128 server slots would take namespace ${rival} over the budget of 64 server slots (controller.budgets.serverSlotsPerNamespace)`,
    );
    await eventually(
      'the budgeted backend answers 503',
      () => site.everywhere('many.example.com', '/', ['http']),
      (answers) => answers.every((answer) => answer.startsWith('503 ')),
    );
    expect(await site.everywhere('steady.example.com', '/x', ['http'])).toEqual(
      Array(2).fill('200 beta /x'),
    );
    expect(await eventsOf(rival, 'steady')).toBe('');
    await kubectl(['delete', 'ingress', 'many', '-n', rival]);
  });

  it('keeps a host with the namespace that named it first when another adds the same, a longer or an Exact path, tells the newcomer why, and the webhook denies it until the owner shares the host', async () => {
    await site.tlsSecret('shop-tls', 'shop.example.com');
    await site.apply(shopIngress());
    await eventually(
      'shop served by alpha',
      () => site.everywhere('shop.example.com', '/'),
      (answers) => answers.every((answer) => answer === '200 alpha /'),
    );
    // creationTimestamp has one-second resolution: make the rival's clearly newer.
    const created = Date.parse(
      (
        await kubectl([
          ...['get', 'ingress', 'shop', '-n', site.namespace],
          ...['-o', 'jsonpath={.metadata.creationTimestamp}'],
        ])
      ).stdout,
    );
    await eventually(
      'the next second of the API server clock',
      () => Promise.resolve(Date.now()),
      (now) => now >= created + 2_000,
    );
    // Written while no webhook is registered (as while it is down: the chart's policy is Ignore).
    await site.apply(
      ingressIn(rival, 'grab', [
        route('shop.example.com', '/', 'beta'),
        route('shop.example.com', '/login', 'beta'),
        route('shop.example.com', '/', 'beta', 'Exact'),
        route('grab.example.com', '/', 'beta'),
      ]),
    );
    await eventually(
      "the rival's other host served",
      () => site.everywhere('grab.example.com', '/', ['http']),
      (answers) => answers.every((answer) => answer === '200 beta /'),
    );
    // Over HTTPS too, where the owner's certificate is presented.
    for (const path of ['/', '/cart', '/login', '/login/form']) {
      expect(await site.everywhere('shop.example.com', path)).toEqual(
        Array(4).fill(`200 alpha ${path}`),
      );
    }
    const events = await eventually(
      'HostConflict Event on the newcomer',
      () => eventsOf(rival, 'grab'),
      (text) => text.includes('HostConflict'),
    );
    expect(events).toContain(
      `HostConflict: Ingress ${rival}/grab names host shop.example.com in spec.rules[0].http.paths[0], which namespace ${site.namespace} owns (Ingress ${site.namespace}/shop named it first); its rules and TLS hosts for it are left out and the rest of ${rival}/grab is served.`,
    );
    expect(await eventsOf(site.namespace, 'shop')).toBe('');
    const metrics = await (
      await fetch(`http://${site.controllers[0]?.address ?? ''}:9090/metrics`)
    ).text();
    expect(metrics).toMatch(/haptic_ingresses\{state="conflicting"\} 1/);

    // The operator registers the chart's webhook (helm upgrade with its certificate).
    await site.enableWebhook();
    const probe = ingressIn(rival, 'probe', [route('probe.example.com', '/a b', 'beta')]);
    await eventually(
      'the registered webhook denies',
      () => dryRun(probe),
      (result) => result.stderr.includes('denied'),
    );
    const denied = await dryRun(
      ingressIn(rival, 'grab2', [route('shop.example.com', '/', 'beta')]),
    );
    expect(denied.exitCode).not.toBe(0);
    expect(denied.stderr).toContain('denied the request');
    expect(denied.stderr).toContain(
      `Ingress ${rival}/grab2 names what another namespace owns: host shop.example.com (spec.rules[0].http.paths[0]), owned by namespace ${site.namespace} (Ingress ${site.namespace}/shop)`,
    );
    // Growing an existing Ingress into the host is a new claim too.
    await site.apply(ingressIn(rival, 'old', [route('old.example.com', '/', 'beta')]));
    const grown = await dryRun(
      ingressIn(rival, 'old', [
        route('old.example.com', '/', 'beta'),
        route('shop.example.com', '/', 'beta'),
      ]),
    );
    expect(grown.stderr).toContain(`owned by namespace ${site.namespace}`);
    // The owner, and the loser fixing its own Ingress, are never blocked.
    const owner = await dryRun(
      ingressIn(site.namespace, 'shop', [route('shop.example.com', '/', 'beta')]),
    );
    expect(owner.stderr).toBe('');
    const fix = await dryRun(ingressIn(rival, 'grab', [route('grab.example.com', '/', 'beta')]));
    expect(fix.stderr).toBe('');
    // A path nobody serves on the host is a takeover too: the host is the unit.
    const otherPath = ingressIn(rival, 'api', [route('shop.example.com', '/rival-api', 'beta')]);
    expect((await dryRun(otherPath)).stderr).toContain(`owned by namespace ${site.namespace}`);

    // The owner shares the host with the rival: the rival's paths are admitted and served,
    // the oldest claim of each path still winning (the owner keeps /).
    await site.apply(shopIngress({ 'haproxy-haptic.org/host-shared-with': rival }));
    await eventually(
      "the rival's /login served once shared",
      () => site.everywhere('shop.example.com', '/login'),
      (answers) => answers.every((answer) => answer === '200 beta /login'),
    );
    expect(await site.everywhere('shop.example.com', '/cart')).toEqual(
      Array(4).fill('200 alpha /cart'),
    );
    expect((await dryRun(otherPath)).stderr).toBe('');
  });

  it("answers 404 for the paths a served host leaves unrouted, never handing them to another namespace's wildcard host", async () => {
    await site.apply(ingressIn(site.namespace, 'app', [route('app.example.com', '/app', 'alpha')]));
    await site.apply(
      ingressIn(rival, 'wild', [route('*.example.com', '/.well-known/acme-challenge', 'beta')]),
    );
    await eventually(
      "the rival's wildcard served for hosts nobody serves",
      () => site.everywhere('free.example.com', '/.well-known/acme-challenge/t', ['http']),
      (answers) => answers.every((answer) => answer === '200 beta /.well-known/acme-challenge/t'),
    );
    await eventually(
      'app served by alpha',
      () => site.everywhere('app.example.com', '/app/x', ['http']),
      (answers) => answers.every((answer) => answer === '200 alpha /app/x'),
    );
    const answers = await site.everywhere('app.example.com', '/.well-known/acme-challenge/t', [
      'http',
    ]);
    expect(answers.map((answer) => answer.split(' ')[0])).toEqual(['404', '404']);
  });

  it("refuses an FQDN endpoint that resolves to loopback (HAProxy's own host: its agent), with an Event", async () => {
    // An FQDN slice may name an IPv4 address in dotted form; it resolves to itself.
    const loopback = '127.0.0.1';
    await site.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'agent', namespace: site.namespace },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 5555 }], clusterIP: 'None' },
    });
    await site.apply({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'agent-1',
        namespace: site.namespace,
        labels: { 'kubernetes.io/service-name': 'agent' },
      },
      addressType: 'FQDN',
      ports: [{ name: 'http', port: 5555, protocol: 'TCP' }],
      endpoints: [{ addresses: [loopback], conditions: { ready: true } }],
    });
    await site.apply(ingressIn(site.namespace, 'peek', [route('peek.example.com', '/', 'agent')]));
    const events = await eventually(
      'EndpointRefused Event',
      () => eventsOf(site.namespace, 'peek'),
      (text) => text.includes('EndpointRefused'),
    );
    expect(events).toContain(
      `EndpointRefused: EndpointSlice ${site.namespace}/agent-1 of Service ${site.namespace}/agent lists ${loopback}, a loopback address (the HAProxy host itself); HAProxy does not send traffic there.`,
    );
    // The Event is reported before the agents take the configuration: wait until both replicas
    // serve the host (no longer the 404 of an unknown host), then it must be the 503.
    const answers = await eventually(
      'peek.example.com served by both replicas',
      () => site.everywhere('peek.example.com', '/v1/state', ['http']),
      (all) => all.every((answer) => !answer.startsWith('404 ')),
    );
    expect(answers).toEqual(Array(2).fill('503 503 the Service has no ready endpoints'));
  });

  it.each([
    [
      "an HAProxy Pod's own address",
      'own-haproxy',
      'IPv4',
      (): string => site.replicas[0]?.address ?? '',
    ],
    [
      "a controller Pod's address",
      'own-controller',
      'IPv4',
      (): string => site.controllers[0]?.address ?? '',
    ],
    ['a NAT64 form of 127.0.0.1', 'nat64-loopback', 'IPv6', (): string => '64:ff9b::7f00:1'],
    ["an address outside the node's Pod CIDR", 'outside', 'IPv4', (): string => '203.0.113.7'],
  ] as const)(
    'refuses %s as an endpoint with an Event, and the other endpoint serves every request',
    async (_, name, addressType, bad) => {
      const address = bad();
      await site.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: site.namespace },
        spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], clusterIP: 'None' },
      });
      const slices = [
        { suffix: 'served', type: 'IPv4', addresses: [beta.address] },
        { suffix: 'refused', type: addressType, addresses: [address] },
      ];
      for (const { suffix, type, addresses } of slices) {
        await site.apply({
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: {
            name: `${name}-${suffix}`,
            namespace: site.namespace,
            labels: { 'kubernetes.io/service-name': name },
          },
          addressType: type,
          ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
          endpoints: addresses.map((each) => ({ addresses: [each], conditions: { ready: true } })),
        });
      }
      const host = `${name}.example.com`;
      await site.apply(ingressIn(site.namespace, name, [route(host, '/', name)]));
      const events = await eventually(
        'EndpointRefused Event',
        () => eventsOf(site.namespace, name),
        (text) => text.includes('EndpointRefused'),
      );
      expect(events).toContain(
        `EndpointRefused: EndpointSlice ${site.namespace}/${name}-refused of Service ${site.namespace}/${name} lists ${address}, `,
      );
      await eventually(
        `${host} served by both replicas`,
        () => site.everywhere(host, '/', ['http']),
        (all) => all.every((answer) => answer === '200 beta /'),
      );
      // Round robin would send every other request to the refused address.
      for (let round = 0; round < 3; round += 1) {
        expect(await site.everywhere(host, `/${String(round)}`, ['http'])).toEqual(
          Array(2).fill(`200 beta /${String(round)}`),
        );
      }
    },
  );
});
