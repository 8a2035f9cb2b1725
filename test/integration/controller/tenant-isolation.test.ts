/**
 * Tenants sharing the chart's HAProxy cannot hurt each other through the routing model:
 * - a host takeover from another namespace (whose name sorts first, which decided it before)
 *   leaves the older Ingress serving, gives the newer one an IngressConflict Event, serves
 *   the rest of the newer one, and is denied by the controller's webhook once registered;
 * - an FQDN EndpointSlice naming the controller's own metrics address is refused with an
 *   Event, and HAProxy never proxies there.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../dev/lib/free-port.ts';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { servingMaterial, webhookHost } from '../webhook/registered-webhook.ts';
import { type Backend, LocalSite, eventually } from './local-site.ts';

let site: LocalSite;
/** The other tenant: a namespace whose name sorts before the site's. */
let rival: string;
let beta: Backend;
let webhook: { url: string; caPem: string };
let registration: string | undefined;

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
  const material = await servingMaterial();
  const port = await freePort();
  const certDir = join(process.env.TMPDIR ?? '/tmp', `haptic-tenants-${String(port)}`);
  mkdirSync(certDir, { recursive: true });
  writeFileSync(join(certDir, 'tls.crt'), material.certPem);
  writeFileSync(join(certDir, 'tls.key'), material.keyPem);
  webhook = { url: `https://${webhookHost}:${String(port)}/validate`, caPem: material.caPem };
  site = await LocalSite.start('ctl-ten', 1, [
    `--webhook-cert-dir=${certDir}`,
    `--webhook-listen=${webhookHost}:${String(port)}`,
  ]);
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
  if (registration !== undefined) {
    await kubectl(['delete', 'validatingwebhookconfiguration', registration, '--ignore-not-found']);
  }
  await kubectl(['delete', 'namespace', rival, '--wait=false']);
  await site.stop();
});

/** Registers the controller's webhook for Ingresses of both tenants; waits until it answers. */
async function registerWebhook(): Promise<void> {
  registration = `haptic-test-${site.namespace}`;
  const body = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: registration },
    webhooks: [
      {
        name: 'ingresses.haptic.haproxy.org',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        timeoutSeconds: 10,
        failurePolicy: 'Fail',
        clientConfig: { url: webhook.url, caBundle: Buffer.from(webhook.caPem).toString('base64') },
        namespaceSelector: {
          matchExpressions: [
            {
              key: 'kubernetes.io/metadata.name',
              operator: 'In',
              values: [site.namespace, rival],
            },
          ],
        },
        rules: [
          {
            apiGroups: ['networking.k8s.io'],
            apiVersions: ['v1'],
            resources: ['ingresses'],
            operations: ['CREATE', 'UPDATE'],
            scope: 'Namespaced',
          },
        ],
      },
    ],
  };
  expect((await kubectl(['apply', '-f', '-'], JSON.stringify(body))).exitCode).toBe(0);
  const probe = ingressIn(rival, 'probe', [route('probe.example.com', '/a b', 'beta')]);
  for (let i = 0; i < 100 && !(await dryRun(probe)).stderr.includes('denied'); i += 1) {
    await sleep(200);
  }
}

describe('tenant isolation in the routing model', () => {
  it('keeps a host with its oldest Ingress when another namespace claims it, tells the newcomer why, and the webhook denies the claim', async () => {
    await site.apply(ingressIn(site.namespace, 'shop', [route('shop.example.com', '/', 'alpha')]));
    await eventually(
      'shop served by alpha',
      () => site.everywhere('shop.example.com', '/', ['http']),
      (answers) => answers.every((answer) => answer === '200 alpha /'),
    );
    // creationTimestamp has one-second resolution: make the rival's clearly newer.
    await sleep(1_100);
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

    await registerWebhook();
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

  it("refuses an FQDN endpoint that names the controller's own metrics address, with an Event", async () => {
    const controller = site.controllers[0]?.address ?? '';
    await site.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'metrics', namespace: site.namespace },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 9090 }], clusterIP: 'None' },
    });
    await site.apply({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'metrics-1',
        namespace: site.namespace,
        labels: { 'kubernetes.io/service-name': 'metrics' },
      },
      addressType: 'FQDN',
      ports: [{ name: 'http', port: 9090, protocol: 'TCP' }],
      endpoints: [{ addresses: [controller], conditions: { ready: true } }],
    });
    await site.apply(
      ingressIn(site.namespace, 'peek', [route('peek.example.com', '/', 'metrics')]),
    );
    const events = await eventually(
      'EndpointRefused Event',
      () => eventsOf(site.namespace, 'peek'),
      (text) => text.includes('EndpointRefused'),
    );
    expect(events).toContain(
      `EndpointRefused: EndpointSlice ${site.namespace}/metrics-1 of Service ${site.namespace}/metrics lists ${controller}, a loopback address (the HAProxy host itself); HAProxy does not send traffic there.`,
    );
    const answers = await site.everywhere('peek.example.com', '/metrics', ['http']);
    expect(answers).toEqual(Array(2).fill('503 503 the Service has no ready endpoints'));
  });
});
