/**
 * Tenants sharing the chart's HAProxy cannot hurt each other through the routing model:
 * - a host takeover from another namespace (whose name sorts first, which decided it before)
 *   leaves the older Ingress serving, gives the newer one an IngressConflict Event, serves
 *   the rest of the newer one, and is denied by the controller's webhook once registered;
 * - an FQDN EndpointSlice naming a loopback host (HAProxy's own: the agent's port) is refused
 *   with an Event, and HAProxy never proxies there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { type Backend, LocalSite, eventually } from './local-site.ts';

let site: LocalSite;
/** The other tenant: a namespace whose name sorts before the site's. */
let rival: string;
let beta: Backend;

function route(host: string, path: string, service: string) {
  return {
    host,
    http: {
      paths: [
        { path, pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } },
      ],
    },
  };
}

function ingressIn(namespace: string, name: string, rules: readonly Record<string, unknown>[]) {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace },
    spec: { ingressClassName: site.ingressClass, rules },
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
  site = await LocalSite.start('ctl-ten');
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
  it('keeps a host with its oldest Ingress when another namespace claims it, tells the newcomer why, and the webhook denies the claim', async () => {
    await site.apply(ingressIn(site.namespace, 'shop', [route('shop.example.com', '/', 'alpha')]));
    await eventually(
      'shop served by alpha',
      () => site.everywhere('shop.example.com', '/', ['http']),
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
        route('grab.example.com', '/', 'beta'),
      ]),
    );
    await eventually(
      "the rival's other host served",
      () => site.everywhere('grab.example.com', '/', ['http']),
      (answers) => answers.every((answer) => answer === '200 beta /'),
    );
    expect(await site.everywhere('shop.example.com', '/cart', ['http'])).toEqual(
      Array(2).fill('200 alpha /cart'),
    );
    const events = await eventually(
      'IngressConflict Event on the newcomer',
      () => eventsOf(rival, 'grab'),
      (text) => text.includes('IngressConflict'),
    );
    expect(events).toContain(
      `IngressConflict: Ingress ${rival}/grab claims host shop.example.com, Prefix path / in spec.rules[0].http.paths[0], which Ingress ${site.namespace}/shop (created earlier) already serves; that path is left out`,
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
      `Ingress ${rival}/grab2 claims what an Ingress of another namespace already serves: host shop.example.com, Prefix path / (spec.rules[0].http.paths[0]), served by Ingress ${site.namespace}/shop`,
    );
    // Growing an existing Ingress into the host is a new claim too.
    await site.apply(ingressIn(rival, 'old', [route('old.example.com', '/', 'beta')]));
    const grown = await dryRun(
      ingressIn(rival, 'old', [
        route('old.example.com', '/', 'beta'),
        route('shop.example.com', '/', 'beta'),
      ]),
    );
    expect(grown.stderr).toContain(`served by Ingress ${site.namespace}/shop`);
    // The owner, and the loser fixing its own Ingress, are never blocked.
    const owner = await dryRun(
      ingressIn(site.namespace, 'shop', [route('shop.example.com', '/', 'beta')]),
    );
    expect(owner.stderr).toBe('');
    const fix = await dryRun(ingressIn(rival, 'grab', [route('grab.example.com', '/', 'beta')]));
    expect(fix.stderr).toBe('');
    const otherPath = await dryRun(
      ingressIn(rival, 'api', [route('shop.example.com', '/rival-api', 'beta')]),
    );
    expect(otherPath.stderr).toBe('');
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
});
