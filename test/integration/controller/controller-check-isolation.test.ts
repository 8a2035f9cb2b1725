/**
 * `haptic run` with two tenants: namespace A's Ingress carries an annotation the
 * HAProxyTemplateConfig writes where HAProxy refuses it; namespace B's Ingress is fine. A is
 * left out with an IngressExcluded Event and counted as excluded; B keeps being served and
 * updated on both replicas. And a template that would take the controller's memory and time
 * (`{% for i in (1..20000000) %}`) fails within the render limits while /healthz answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { type Backend, LocalSite, eventually } from './local-site.ts';

let site: LocalSite;
let backend: Backend;
let tenantA: string;
let tenantB: string;
let goodTemplate: string;

/** The chart's template plus a backend per Ingress with its timeout annotation. */
const annotationBackends = `
{% for ingress in ingresses %}{% if ingress.annotations.timeout %}
backend timeout_{{ ingress.namespace }}_{{ ingress.name }}
  timeout server {{ ingress.annotations.timeout }}
{% endif %}{% endfor %}`;

async function templateOf(): Promise<string> {
  const get = await kubectl([
    ...['get', 'haproxytemplateconfig', 'haptic', '-n', site.namespace, '-o', 'json'],
  ]);
  return (JSON.parse(get.stdout) as { spec: { haproxyConfig: { template: string } } }).spec
    .haproxyConfig.template;
}

async function setTemplate(template: string): Promise<void> {
  const patch = await kubectl([
    ...['patch', 'haproxytemplateconfig', 'haptic', '-n', site.namespace, '--type=merge', '-p'],
    JSON.stringify({ spec: { haproxyConfig: { template } } }),
  ]);
  expect(patch.exitCode).toBe(0);
}

const condition = async () =>
  (
    await kubectl([
      ...['get', 'haproxytemplateconfig', 'haptic', '-n', site.namespace, '-o'],
      'jsonpath={.status.observedGeneration} {.status.conditions[0].status} {.status.conditions[0].reason} {.status.conditions[0].message}',
    ])
  ).stdout;

const generation = async () =>
  (
    await kubectl([
      ...['get', 'haproxytemplateconfig', 'haptic', '-n', site.namespace],
      ...['-o', 'jsonpath={.metadata.generation}'],
    ])
  ).stdout;

/** The site's backend as Service `web` of `namespace`. */
async function serviceIn(namespace: string): Promise<void> {
  await site.apply({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace },
    spec: { ports: [{ name: 'http', port: 80, targetPort: backend.port }], clusterIP: 'None' },
  });
  await site.apply({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace, labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: backend.port, protocol: 'TCP' }],
    endpoints: [{ addresses: [backend.address], conditions: { ready: true } }],
  });
}

function ingress(namespace: string, name: string, host: string, timeout: string, path = '/') {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace, annotations: { 'haproxy-haptic.org/timeout': timeout } },
    spec: {
      ingressClassName: site.ingressClass,
      rules: [
        {
          host,
          http: {
            paths: [
              {
                path,
                pathType: 'Prefix',
                backend: { service: { name: 'web', port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  };
}

/** The chart's livenessProbe of the controller leaves timeoutSeconds at Kubernetes' 1. */
const livenessProbeTimeoutMs = 1_000;

const all = (value: string) => (answers: string[]) => answers.every((answer) => answer === value);

beforeAll(async () => {
  site = await LocalSite.start('iso');
  backend = await site.addBackend('web');
  tenantA = await createTestNamespace('iso-a');
  tenantB = await createTestNamespace('iso-b');
  await serviceIn(tenantA);
  await serviceIn(tenantB);
  goodTemplate = (await templateOf()) + annotationBackends;
  await setTemplate(goodTemplate);
  const wanted = await generation();
  await eventually('the template with annotations is delivered', condition, (text) =>
    text.startsWith(`${wanted} True Delivered`),
  );
}, 240_000);

afterAll(async () => {
  await site.stop();
});

describe("one tenant's object HAProxy rejects", () => {
  it("is left out with an Event, and the other tenant's Ingress keeps being served and updated", async () => {
    await site.apply(ingress(tenantB, 'shop', 'shop.b.example.com', '5s'));
    await eventually(
      'B served',
      () => site.everywhere('shop.b.example.com', '/cart', ['http']),
      all('200 web /cart'),
    );

    await site.apply(ingress(tenantA, 'blog', 'blog.a.example.com', '5parsecs'));
    const events = await eventually(
      'IngressExcluded on A',
      async () =>
        (
          await kubectl([
            ...['get', 'events', '-n', tenantA, '--field-selector', 'reason=IngressExcluded'],
            ...['-o', 'jsonpath={.items[*].message}'],
          ])
        ).stdout,
      (text) => text.includes('blog'),
    );
    expect(events).toContain(
      `Ingress ${tenantA}/blog is not served: haproxy -c rejects the line of haproxy.cfg made from its annotation haproxy-haptic.org/timeout (metadata.annotations["haproxy-haptic.org/timeout"]): has an invalid time value (a number with a unit, such as 5s).`,
    );
    expect(await condition()).toMatch(/ True Delivered /);
    const metrics = await (
      await fetch(`http://${site.controllers[0]?.address ?? ''}:9090/metrics`)
    ).text();
    expect(metrics).toMatch(/haptic_ingresses\{state="excluded"\} 1/);
    expect(await site.everywhere('blog.a.example.com', '/', ['http'])).toEqual(
      Array(2).fill('404 404 no Ingress matches this host and path'),
    );

    // B changes while A is still there and still wrong: B's change is delivered.
    await site.apply(ingress(tenantB, 'shop', 'shop.b.example.com', '6s', '/cart'));
    await site.apply(ingress(tenantB, 'news', 'news.b.example.com', '5s'));
    await eventually(
      'B updated',
      () => site.everywhere('news.b.example.com', '/', ['http']),
      all('200 web /'),
    );
    expect(await site.everywhere('shop.b.example.com', '/other', ['http'])).toEqual(
      Array(2).fill('404 404 no Ingress matches this host and path'),
    );

    // A fixed: served again.
    await site.apply(ingress(tenantA, 'blog', 'blog.a.example.com', '5s'));
    await eventually(
      'A served after its fix',
      () => site.everywhere('blog.a.example.com', '/', ['http']),
      all('200 web /'),
    );
  });
});

describe('template resource limits', () => {
  it('stops a 20,000,000 range within the render limits while /healthz keeps answering', async () => {
    const health = `http://${site.controllers[0]?.address ?? ''}:8080/healthz`;
    let slowest = 0;
    let failures = 0;
    const watching = { on: true };
    const watcher = (async () => {
      while (watching.on) {
        const started = performance.now();
        const answer = await fetch(health, { signal: AbortSignal.timeout(2_000) }).catch(
          () => undefined,
        );
        if (answer?.status !== 200) failures += 1;
        slowest = Math.max(slowest, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    try {
      await setTemplate(`{% for i in (1..20000000) %}{% endfor %}${goodTemplate}`);
      const wanted = await generation();
      const failed = await eventually(
        'RenderFailed',
        condition,
        (text) => text.startsWith(`${wanted} False RenderFailed`),
        30_000,
      );
      expect(failed).toMatch(/spec\.haproxyConfig\.template.*(was stopped|limit exceeded)/);
    } finally {
      watching.on = false;
      await watcher;
    }
    expect(failures).toBe(0);
    // Each an answer the kubelet's liveness probe takes, not a failure.
    expect(slowest).toBeLessThan(livenessProbeTimeoutMs);
    // Still served from the last good configuration, and rendering again once fixed.
    expect(await site.everywhere('shop.b.example.com', '/cart', ['http'])).toEqual(
      Array(2).fill('200 web /cart'),
    );
    await setTemplate(goodTemplate);
    const wanted = await generation();
    await eventually('Ready again', condition, (text) => text.startsWith(`${wanted} True`));
  });
});
