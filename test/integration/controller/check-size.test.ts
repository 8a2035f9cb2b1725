/**
 * A configuration too large for the check, not wrong: when `haproxy -c` runs out of its address
 * space in the sandbox, the controller's pipeline halves the total budgets and renders again,
 * so the newest backends are left out (BudgetExceeded, saying why the budget is lower) and the
 * rest is checked and delivered, instead of every tenant's configuration failing. HAProxy and
 * the sandbox are real; the sandbox's memory limit is lowered so that a configuration of a
 * size this test can render in seconds runs HAProxy out of memory.
 *
 * Sizes (HAProxy 3.0, the default template, measured): 40,960 server slots run out of memory
 * in `haproxy -c` up to 210 MiB of address space (at 220 it crashes, at 230 it passes); the
 * 24,468 left after halving pass from 190 MiB, and failed now and then at 180. The limit of
 * 200 MiB sits between them (HAProxy then alerts "(null)out of memory.", its messages
 * unallocated).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultTemplateConfig } from '../../../bench/controller-fixture.ts';
import { type LocalSandbox, startLocalSandbox } from '../../../dev/lib/local-sandbox.ts';
import type {
  ClusterSnapshot,
  EndpointSliceView,
  ServiceView,
} from '../../../src/controller/routing/cluster-snapshot.ts';
import { ConfigPipeline } from '../../../src/controller/pipeline/config-pipeline.ts';
import { anyRangeEndpointRules } from '../../../src/validation/endpoint-addresses.ts';
import { type IngressView, readIngress } from '../../../src/validation/ingress-view.ts';

const tmp = mkdtempSync(join(tmpdir(), 'check-size-'));
let sandbox: LocalSandbox;
let pipeline: ConfigPipeline;

beforeAll(async () => {
  sandbox = await startLocalSandbox({
    dir: join(tmp, 'sandbox'),
    extraArgs: ['--memory-limit=200', '--time-limit=60'],
  });
  pipeline = new ConfigPipeline({ ingressClass: 'haptic', check: { socket: sandbox.socket } });
}, 60_000);

afterAll(async () => {
  await pipeline.close();
  await sandbox.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const namespaces = 5;
const servicesPerNamespace = 64;
/** 100 endpoints take 128 server slots: 5 × 64 × 128 = 40,960, each namespace at its 8,192. */
const endpointsPerService = 100;

/** Ingress i of a namespace, created i minutes after the first (the newest is left out first). */
function ingress(namespace: string, i: number): IngressView {
  const view = readIngress({
    kind: 'Ingress',
    metadata: {
      namespace,
      name: `web${String(i)}`,
      creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    },
    spec: {
      ingressClassName: 'haptic',
      rules: [
        {
          host: `web${String(i)}.${namespace}.example.com`,
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: `web${String(i)}`, port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  });
  if (typeof view === 'string') throw new Error(view);
  return view;
}

function snapshot(): ClusterSnapshot {
  const ingresses: IngressView[] = [];
  const services = new Map<string, ServiceView>();
  const endpointSlices = new Map<string, EndpointSliceView[]>();
  for (let n = 0; n < namespaces; n += 1) {
    const namespace = `tenant${String(n)}`;
    for (let i = 0; i < servicesPerNamespace; i += 1) {
      const name = `web${String(i)}`;
      ingresses.push(ingress(namespace, i));
      services.set(`${namespace}/${name}`, {
        namespace,
        name,
        ports: [{ name: 'http', port: 80 }],
      });
      endpointSlices.set(`${namespace}/${name}`, [
        {
          namespace,
          name: `${name}-1`,
          serviceName: name,
          addressType: 'IPv4',
          ports: [{ name: 'http', port: 8080 }],
          endpoints: Array.from({ length: endpointsPerService }, (_, e) => ({
            addresses: [`10.${String(n)}.${String(i)}.${String(e + 1)}`],
            ready: true,
          })),
        },
      ]);
    }
  }
  return {
    ingresses,
    services,
    endpointSlices,
    secrets: new Map(),
    fqdnNames: new Map(),
    endpointRules: anyRangeEndpointRules,
  };
}

describe('a configuration too large for the check', () => {
  it('is checked again with halved totals: the newest backends are left out with BudgetExceeded, the rest passes', async () => {
    const outcome = await pipeline.run(defaultTemplateConfig(), snapshot(), new Date());
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const served = outcome.model.model.backends.filter((backend) => backend.servers.length > 0);
    // Every backend's slots, the spare ones of those left out included, within the halved total.
    const backends = outcome.model.model.backends;
    expect(backends.reduce((sum, backend) => sum + backend.slots.length, 0)).toBeLessThanOrEqual(
      24_576,
    );
    expect(served.length).toBeGreaterThan(0);
    const budgeted = outcome.model.warnings.filter(
      (warning) => warning.reason === 'BudgetExceeded',
    );
    expect(budgeted.length).toBe(namespaces * servicesPerNamespace - served.length);
    // The newest first: every backend left out is newer than every backend served.
    const index = (name: string): number => Number(/web(\d+)/.exec(name)?.[1] ?? -1);
    const newestServed = Math.max(...served.map((backend) => index(backend.service)));
    const oldestLeft = Math.min(...budgeted.map((warning) => index(warning.ingress ?? '')));
    expect(oldestLeft).toBeGreaterThanOrEqual(newestServed);
    expect(budgeted[0]?.message).toContain(
      'over the budget of 24576 server slots (controller.budgets.serverSlots, halved, as haproxy -c ran out of memory with more)',
    );
  }, 240_000);
});
