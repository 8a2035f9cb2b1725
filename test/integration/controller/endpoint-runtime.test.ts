/**
 * Endpoint changes reach both HAProxy replicas of the chart's release without a reload: a
 * Service whose EndpointSlice lists one backend Pod, then both, then the other; traffic follows
 * each change, `haptic_runtime_updates_total` counts them, each went as a runtime change (no
 * files: `haptic_runtime_change_requests_total`) and `haptic_reloads_total` does not move,
 * while a new Ingress host (a map change) still reloads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, LocalSite, eventually } from './local-site.ts';

let site: LocalSite;
let alpha: Backend;
let beta: Backend;

/** The sum of every sample of `name` whose labels contain `labels`. */
async function metric(name: string, labels = ''): Promise<number> {
  const controller = site.controllers[0];
  if (controller === undefined) throw new Error('no controller');
  const text = await (await fetch(`http://${controller.address}:9090/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

function slice(backends: readonly Backend[]): Record<string, unknown> {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'mixed-1',
      namespace: site.namespace,
      labels: { 'kubernetes.io/service-name': 'mixed' },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: backends.map((backend) => ({
      addresses: [backend.address],
      conditions: { ready: true },
    })),
  };
}

/** The distinct answers of every replica to `requests` requests each (roundrobin). */
async function answers(host: string, requests = 6): Promise<string[][]> {
  return Promise.all(
    site.replicas.map(async (replica) => {
      const seen = new Set<string>();
      for (let i = 0; i < requests; i += 1) {
        const answer = await site.fetch(replica, 'http', host, '/');
        seen.add(`${answer.status} ${answer.body}`);
      }
      return [...seen].sort();
    }),
  );
}

function route(host: string, service: string) {
  return {
    host,
    http: {
      paths: [
        {
          path: '/',
          pathType: 'Prefix',
          backend: { service: { name: service, port: { number: 80 } } },
        },
      ],
    },
  };
}

beforeAll(async () => {
  site = await LocalSite.start('endpoint-rt');
  alpha = await site.addBackend('alpha');
  beta = await site.addBackend('beta');
  await site.apply({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'mixed', namespace: site.namespace },
    spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
  });
  await site.apply(slice([alpha]));
  await site.apply(site.ingress('mixed', [route('mixed.example.com', 'mixed')]));
  await eventually(
    'both replicas serve alpha',
    () => answers('mixed.example.com', 2),
    (seen) => seen.every((replica) => replica.join() === '200 alpha /'),
  );
}, 300_000);

afterAll(async () => {
  await site.stop();
});

describe('endpoint changes on the chart release', () => {
  it('follows endpoints added and removed on both replicas without a reload', async () => {
    const reloads = await metric('haptic_reloads_total');
    const updates = await metric('haptic_runtime_updates_total');
    const compact = await metric('haptic_runtime_change_requests_total', 'result="applied"');
    await site.apply(slice([alpha, beta]));
    await eventually(
      'both replicas balance over alpha and beta',
      () => answers('mixed.example.com'),
      (seen) => seen.every((replica) => replica.join() === '200 alpha /,200 beta /'),
    );
    await site.apply(slice([beta]));
    await eventually(
      'both replicas serve beta alone',
      () => answers('mixed.example.com'),
      (seen) => seen.every((replica) => replica.join() === '200 beta /'),
    );
    // The controller counts an apply once the agent's answer is back, after it serves.
    await eventually(
      'two runtime updates per replica counted',
      () => metric('haptic_runtime_updates_total'),
      (count) => count >= updates + 2 * site.replicas.length,
    );
    // Each went as a runtime change (the slots and the digests of both sets), not the files.
    expect(await metric('haptic_runtime_change_requests_total', 'result="applied"')).toBe(
      compact + 2 * site.replicas.length,
    );
    expect(await metric('haptic_runtime_change_requests_total', 'result="Runtime')).toBe(0);
    // The full render that confirms the slot updates once changes pause finds the same files.
    const unchanged = await metric('haptic_reconciles_total', 'result="unchanged"');
    await eventually(
      'the confirming full render',
      () => metric('haptic_reconciles_total', 'result="unchanged"'),
      (count) => count > unchanged,
    );
    expect(await metric('haptic_reloads_total')).toBe(reloads);
  });

  it('still reloads for a change of the routing (a new host)', async () => {
    const reloads = await metric('haptic_reloads_total');
    await site.apply(site.ingress('other', [route('other.example.com', 'alpha')]));
    await eventually(
      'both replicas serve the new host',
      () => answers('other.example.com', 1),
      (seen) => seen.every((replica) => replica.join() === '200 alpha /'),
    );
    await eventually(
      'a reload per replica counted',
      () => metric('haptic_reloads_total'),
      (count) => count >= reloads + site.replicas.length,
    );
  });
});
