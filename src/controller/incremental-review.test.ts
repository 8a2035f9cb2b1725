/**
 * An admission review rendered incrementally (one pipeline for every review: its render
 * process keeps loop fragments, the pipeline keeps the model's sorted lists, backends and the
 * lint) answers exactly as a review rendered from nothing (a fresh pipeline and render
 * process for each), for random sequences of Ingress creations, changes (hosts, paths,
 * default backends, TLS, ingress class) and deletions over a base state of many Ingresses,
 * so that the model merges the changed Ingress's routes into the kept sorted lists.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterSnapshot, EndpointSliceView, SecretView } from './routing/cluster-snapshot.ts';
import { ConfigPipeline } from './pipeline/config-pipeline.ts';
import { KeptBackends } from './routing/model-backends.ts';
import { KeptModel, buildRoutingModel } from './routing/routing-model.ts';
import { createRoutingReviewer } from './admission/routing-reviewer.ts';
import { type IngressView, readIngress } from '../validation/ingress-view.ts';
import { anyRangeEndpointRules } from '../validation/endpoint-addresses.ts';

const chart = join(import.meta.dirname, '../../chart/files/default-template');
const chartFile = (name: string): string => readFileSync(join(chart, name), 'utf8');

/**
 * The chart's templates, and a map with loops that cannot be reused (forloop, assign) beside
 * reusable ones whose filters charge Liquid's memory limit.
 */
const config = {
  apiVersion: 'haproxy-haptic.org/v1alpha1',
  kind: 'HAProxyTemplateConfig',
  metadata: { namespace: 'haptic', name: 'haptic', uid: 'u', resourceVersion: '1' },
  spec: {
    haproxyConfig: { template: chartFile('haproxy.cfg.liquid') },
    maps: {
      'exact.map': { template: chartFile('exact.map.liquid') },
      'prefix.map': { template: chartFile('prefix.map.liquid') },
      'extra.map': {
        template: [
          '{% assign seen = 0 %}',
          '{% for route in routes %}{{ forloop.index }} {{ route.host | upcase }}{{ route.path }}',
          '{% assign seen = seen | plus: 1 %}{% endfor %}',
          '{% for backend in backends %}{{ backend.name | split: ":" | join: "_" }}',
          '{% for server in backend.servers %} {{ server.endpoint | append: "/" }}{% endfor %}',
          '{% if backend.servers.size == 0 %} none{% endif %}\n{% endfor %}',
          'total {{ seen }}\n',
        ].join(''),
      },
    },
    certificateLists: {
      'certificates.list': { template: chartFile('certificates.list.liquid') },
    },
  },
};

const tmp = mkdtempSync(join(tmpdir(), 'incremental-review-'));
const warm = new ConfigPipeline({ ingressClass: 'haptic', check: { socket: join(tmp, 'none') } });
afterAll(async () => {
  await warm.close();
  rmSync(tmp, { recursive: true, force: true });
});

function tlsSecret(name: string): SecretView {
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
      ...['-keyout', join(tmp, 'tls.key'), '-out', join(tmp, 'tls.crt'), '-days', '3'],
      ...['-subj', '/CN=x.example.com'],
    ],
    { stdio: 'ignore' },
  );
  const data = (file: string): string => readFileSync(join(tmp, file)).toString('base64');
  return { namespace: 'a', name, data: { 'tls.crt': data('tls.crt'), 'tls.key': data('tls.key') } };
}

function slice(service: string, addresses: readonly string[]): EndpointSliceView {
  return {
    namespace: 'a',
    name: `${service}-1`,
    serviceName: service,
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [{ addresses, ready: true }],
  };
}

/** Services web (two endpoints), api (one, 127.0.0.1 refused), idle (none); no Service gone. */
const base: Omit<ClusterSnapshot, 'ingresses'> = {
  services: new Map(
    ['web', 'api', 'idle'].map((name) => [
      `a/${name}`,
      { namespace: 'a', name, ports: [{ name: 'http', port: 80 }] },
    ]),
  ),
  endpointSlices: new Map([
    ['a/web', [slice('web', ['10.0.0.1', '10.0.0.2'])]],
    ['a/api', [slice('api', ['10.0.1.1', '127.0.0.1'])]],
  ]),
  secrets: new Map([['a/tls', tlsSecret('tls')]]),
  fqdnNames: new Map(),
  endpointRules: anyRangeEndpointRules,
};

const ingressObject = fc.record({
  namespace: fc.constantFrom('a', 'b'),
  name: fc.constantFrom('one', 'two', 'three', 'four'),
  created: fc.constantFrom('2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z', undefined),
  host: fc.constantFrom('x.example.com', 'y.example.com', '*.example.com', ''),
  paths: fc.array(
    fc.record({
      path: fc.constantFrom('/', '/api', '/v1/', 'bad'),
      pathType: fc.constantFrom('Prefix', 'Exact'),
      service: fc.constantFrom('web', 'api', 'idle', 'gone'),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  tls: fc.constantFrom(undefined, 'tls', 'missing'),
  defaultBackend: fc.constantFrom(undefined, 'web', 'gone'),
  ingressClass: fc.constantFrom('haptic', 'haptic', 'other'),
  shares: fc.constantFrom(undefined, undefined, 'a', 'b', '*'),
});
type IngressObject = typeof ingressObject extends fc.Arbitrary<infer T> ? T : never;

function manifest(object: IngressObject): Record<string, unknown> {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      namespace: object.namespace,
      name: object.name,
      ...(object.created === undefined ? {} : { creationTimestamp: object.created }),
      ...(object.shares === undefined
        ? {}
        : { annotations: { 'haproxy-haptic.org/host-shared-with': object.shares } }),
    },
    spec: {
      ingressClassName: object.ingressClass,
      ...(object.defaultBackend === undefined
        ? {}
        : { defaultBackend: { service: { name: object.defaultBackend, port: { number: 80 } } } }),
      ...(object.tls === undefined
        ? {}
        : { tls: [{ hosts: [object.host || 'x.example.com'], secretName: object.tls }] }),
      rules: [
        {
          ...(object.host === '' ? {} : { host: object.host }),
          http: {
            paths: object.paths.map((entry) => ({
              path: entry.path,
              pathType: entry.pathType,
              backend: { service: { name: entry.service, port: { number: 80 } } },
            })),
          },
        },
      ],
    },
  };
}

/** The view the watch keeps: undefined for an unreadable Ingress or another class's. */
function viewOf(object: IngressObject): IngressView | undefined {
  const view = readIngress(manifest(object));
  return typeof view === 'string' || object.ingressClass !== 'haptic' ? undefined : view;
}

/**
 * Ingresses of namespace c that claim nothing the random ones do (hosts of their own), some
 * older and some newer than those: enough that one Ingress's routes are merged into the
 * kept sorted lists rather than sorted with them.
 */
const filler: readonly IngressView[] = Array.from({ length: 48 }, (_, i) => {
  const view = readIngress({
    kind: 'Ingress',
    metadata: {
      namespace: 'c',
      name: `f${String(i)}`,
      creationTimestamp: `2026-01-${String((i % 28) + 1).padStart(2, '0')}T00:00:00Z`,
    },
    spec: {
      ingressClassName: 'haptic',
      rules: [
        {
          host: `f${String(i % 40)}.example.com`,
          http: {
            paths: [
              {
                path: i % 3 === 0 ? '/' : `/p${String(i)}`,
                pathType: i % 2 === 0 ? 'Prefix' : 'Exact',
                backend: { service: { name: 'web', port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  });
  if (typeof view === 'string') throw new Error(view);
  return view;
});

const operation = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), object: ingressObject }),
  fc.record({ kind: fc.constant('delete' as const), object: ingressObject }),
);

function reviewerOf(pipeline: ConfigPipeline, snapshot: () => ClusterSnapshot) {
  return createRoutingReviewer({
    watch: {
      snapshot,
      templateConfig: () => config,
      ourClassIsDefault: () => false,
    },
    pipeline,
    ingressClass: 'haptic',
    namespace: 'haptic',
    templateConfigName: 'haptic',
  });
}

/** Deep-comparable parts of a pipeline outcome (without its timings). */
function comparable(outcome: Awaited<ReturnType<ConfigPipeline['run']>>): unknown {
  if (!outcome.ok) return outcome;
  return {
    files: outcome.files.map((file) => [file.path, file.content.toString()]),
    digest: outcome.digest,
    model: outcome.model,
  };
}

describe('an incremental admission review', () => {
  it('answers as a review rendered from nothing, for random Ingress writes and deletions', async () => {
    const now = new Date('2026-11-29T12:00:00Z');
    await fc.assert(
      fc.asyncProperty(
        fc.array(ingressObject, { maxLength: 4 }),
        fc.array(operation, { minLength: 1, maxLength: 5 }),
        async (initial, operations) => {
          const ingresses = new Map<string, IngressView>(
            filler.map((view) => [`${view.namespace}/${view.name}`, view]),
          );
          const put = (object: IngressObject): void => {
            const view = viewOf(object);
            const key = `${object.namespace}/${object.name}`;
            if (view === undefined) ingresses.delete(key);
            else ingresses.set(key, view);
          };
          initial.forEach(put);
          let snapshot: ClusterSnapshot = { ...base, ingresses: [] };
          // One reviewer for the whole run, as the controller has: it keeps the state's claims.
          const incrementalReviewer = reviewerOf(warm, () => snapshot);
          for (const step of operations) {
            snapshot = { ...base, ingresses: [...ingresses.values()] };
            const current = snapshot;
            if (step.kind === 'write') {
              const fresh = new ConfigPipeline({
                ingressClass: 'haptic',
                check: { socket: join(tmp, 'none') },
              });
              try {
                const object = manifest(step.object);
                // Lint only (no sandbox): a minute to answer, a review never given up.
                const review = {
                  deadline: performance.now() + 60_000,
                  signal: new AbortController().signal,
                };
                const [incremental, full] = await Promise.all([
                  incrementalReviewer.reviewIngress(object, step.object.namespace, review),
                  reviewerOf(fresh, () => current).reviewIngress(
                    object,
                    step.object.namespace,
                    review,
                  ),
                ]);
                expect(incremental).toEqual(full);
                const [warmState, freshState] = await Promise.all([
                  warm.run(config, snapshot, now, { lintOnly: true }),
                  fresh.run(config, snapshot, now, { lintOnly: true }),
                ]);
                expect(comparable(warmState)).toEqual(comparable(freshState));
              } finally {
                await fresh.close();
              }
              put(step.object);
            } else {
              ingresses.delete(`${step.object.namespace}/${step.object.name}`);
            }
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 240_000);

  it('keeps nothing of a build that throws: the next builds what a build from nothing builds', () => {
    const now = new Date('2026-11-29T12:00:00Z');
    const kept = { keptModel: new KeptModel(), keptBackends: new KeptBackends() };
    const added = viewOf({
      namespace: 'a',
      name: 'one',
      created: undefined,
      host: 'x.example.com',
      paths: [{ path: '/', pathType: 'Prefix', service: 'web' }],
      tls: 'tls',
      defaultBackend: undefined,
      ingressClass: 'haptic',
      shares: undefined,
    });
    if (added === undefined) throw new Error('no view');
    buildRoutingModel({ ...base, ingresses: filler }, { now, ...kept });
    // The certificates are built after the claims were edited: a throw there (here, reading
    // the Secrets) must not leave the edited claims ahead of the kept lists.
    const failing = new Map(base.secrets);
    failing.get = () => {
      throw new Error('secrets unreadable');
    };
    const next: ClusterSnapshot = { ...base, ingresses: [...filler, added] };
    expect(() => buildRoutingModel({ ...next, secrets: failing }, { now, ...kept })).toThrow(
      /secrets unreadable/,
    );
    expect(buildRoutingModel(next, { now, ...kept })).toEqual(buildRoutingModel(next, { now }));
    const again: ClusterSnapshot = { ...base, ingresses: [...filler] };
    expect(buildRoutingModel(again, { now, ...kept })).toEqual(buildRoutingModel(again, { now }));
  });

  it('builds the model a build from nothing builds, from the sorted lists of the last one', () => {
    const now = new Date('2026-11-29T12:00:00Z');
    fc.assert(
      fc.property(
        fc.array(ingressObject, { maxLength: 6 }),
        fc.array(operation, { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        (initial, operations, endpointsChange) => {
          const kept = { keptModel: new KeptModel(), keptBackends: new KeptBackends() };
          const ingresses = new Map<string, IngressView>(
            filler.map((view) => [`${view.namespace}/${view.name}`, view]),
          );
          const put = (object: IngressObject): void => {
            const view = viewOf(object);
            const key = `${object.namespace}/${object.name}`;
            if (view === undefined) ingresses.delete(key);
            else ingresses.set(key, view);
          };
          initial.forEach(put);
          let endpointSlices = base.endpointSlices;
          for (const [i, step] of operations.entries()) {
            if (step.kind === 'write') put(step.object);
            else ingresses.delete(`${step.object.namespace}/${step.object.name}`);
            if (endpointsChange && i % 3 === 2) {
              // A Service's endpoints change between builds: its backend is built again.
              endpointSlices = new Map([
                ...endpointSlices,
                ['a/idle', [slice('idle', [`10.0.2.${String(i)}`])]],
              ]);
            }
            const snapshot: ClusterSnapshot = {
              ...base,
              endpointSlices,
              ingresses: [...ingresses.values()],
            };
            expect(buildRoutingModel(snapshot, { now, ...kept })).toEqual(
              buildRoutingModel(snapshot, { now }),
            );
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
