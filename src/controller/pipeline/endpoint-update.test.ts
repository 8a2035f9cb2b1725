import { describe, expect, it } from 'vitest';
import { defaultTemplateConfig, snapshotOf } from '../../../bench/controller-fixture.ts';
import type { ClusterSnapshot, EndpointSliceView } from '../routing/cluster-snapshot.ts';
import { digestOf } from '../../agent-api/apply-request.ts';
import { runtimePlan } from '../../haproxy/runtime-changes.ts';
import { endpointUpdate, type RenderedConfig } from './endpoint-update.ts';
import { buildBackend } from '../routing/model-backends.ts';
import { assembleBundle, requestModel } from '../render/render-bundle.ts';
import { readTemplateConfig } from '../../api/template-config.ts';
import type { EndpointRules } from '../../validation/endpoint-addresses.ts';
import { readIngress } from '../../validation/ingress-view.ts';
import {
  createTemplateEngine,
  parseTemplates,
  renderTemplates,
  templateContext,
} from '../render/template-engine.ts';

const engine = createTemplateEngine();

/** A full render of the chart's default template, as the pipeline makes it (no check). */
function fullRender(snapshot: ClusterSnapshot, template = defaultTemplateConfig()): RenderedConfig {
  const config = readTemplateConfig(template);
  if ('message' in config) throw new Error(config.message);
  const parsed = parseTemplates(engine, config);
  if ('message' in parsed) throw new Error(parsed.message);
  const model = requestModel({
    snapshot,
    ingressClass: 'haptic',
    now: new Date('2026-12-01T00:00:00Z'),
  });
  const output = renderTemplates(engine, parsed, templateContext(model.model, 'haptic'));
  if (!output.ok) throw new Error(output.message);
  const bundle = assembleBundle(model, output.files);
  if (!bundle.ok) throw new Error(bundle.message);
  return { files: bundle.files, model: bundle.model };
}

function withEndpoints(
  snapshot: ClusterSnapshot,
  service: number,
  addresses: readonly string[],
): ClusterSnapshot {
  const key = `app/svc${service}`;
  const [slice] = snapshot.endpointSlices.get(key) ?? [];
  if (slice === undefined) throw new Error(`no slice for ${key}`);
  const next: EndpointSliceView = {
    ...slice,
    addressType: addresses.some((address) => address.includes(':')) ? 'IPv6' : 'IPv4',
    endpoints: addresses.map((address) => ({ addresses: [address], ready: true })),
  };
  return { ...snapshot, endpointSlices: new Map(snapshot.endpointSlices).set(key, [next]) };
}

/** runtimePlan's view of a set, every file hashed and haproxy.cfg decoded here. */
function setText(config: RenderedConfig): Parameters<typeof runtimePlan>[0] {
  return {
    files: config.files.map((file) => ({ path: file.path, digest: digestOf(file.content) })),
    config: texts(config)['haproxy.cfg'] ?? '',
  };
}

function texts(config: RenderedConfig): Record<string, string> {
  return Object.fromEntries(
    config.files.map((file) => [file.path, Buffer.from(file.content).toString('utf8')]),
  );
}

describe('endpointUpdate', () => {
  // 60 full renders at 40 backends: seconds on a loaded machine.
  it(
    'gives the files of a full render through a run of endpoint changes',
    { timeout: 60_000 },
    async () => {
      let snapshot = await snapshotOf(40);
      let previous = fullRender(snapshot);
      let random = 7;
      let updates = 0;
      const next = (): number => (random = (random * 1103515245 + 12345) % 2 ** 31);
      for (let step = 0; step < 60; step += 1) {
        const service = next() % 40;
        // One or two endpoints: within the 4 slots of two endpoints, so always slot changes.
        const count = 1 + (next() % 2);
        const addresses = Array.from(
          { length: count },
          () => `10.200.${next() % 256}.${1 + (next() % 250)}`,
        );
        snapshot = withEndpoints(snapshot, service, addresses);
        const update = endpointUpdate(previous, snapshot, buildBackend);
        const expected = fullRender(snapshot);
        if (update.kind === 'unchanged') {
          expect(texts(previous)).toEqual(texts(expected));
          continue;
        }
        expect(update.kind, JSON.stringify(update)).toBe('slots');
        if (update.kind !== 'slots') return;
        expect(texts(update)).toEqual(texts(expected));
        expect(update.model.model.backends).toEqual(expected.model.model.backends);
        // What the delivery reuses: the digests, the text and runtimePlan's changes.
        const set = setText(update);
        expect({ files: update.fileDigests, config: update.configText }).toEqual(set);
        expect(runtimePlan(setText(previous), set)).toEqual(
          expect.objectContaining({ runtime: true, changes: update.changes }),
        );
        previous = update;
        updates += 1;
      }
      expect(updates).toBeGreaterThan(50);
    },
  );

  it('needs a full render when a backend needs more slots', async () => {
    const snapshot = await snapshotOf(3);
    const previous = fullRender(snapshot);
    const grown = withEndpoints(snapshot, 1, ['10.9.0.1', '10.9.0.2', '10.9.0.3', '10.9.0.4']);
    expect(endpointUpdate(previous, grown, buildBackend)).toEqual({
      kind: 'render',
      reason: 'SlotCountChanged',
      message: 'backend app:svc1:80 needs 8 server slots',
    });
  });

  it('needs a full render when an endpoint is refused', async () => {
    const snapshot = await snapshotOf(3);
    const previous = fullRender(snapshot);
    const refused = withEndpoints(snapshot, 2, ['10.9.0.1', '127.0.0.1']);
    expect(endpointUpdate(previous, refused, buildBackend)).toMatchObject({
      kind: 'render',
      reason: 'BackendLeavesEndpointsOut',
      message: 'backend app:svc2:80 leaves endpoints out',
    });
  });

  describe("under the cluster's endpoint rules", () => {
    const rules: EndpointRules = {
      ownPods: [{ name: 'haptic/haptic-haproxy-7d9-abcde', addresses: ['10.9.0.9'] }],
      podCIDRs: ['10.0.0.0/8', 'fd00::/64'],
      podCIDRsFrom: 'nodes',
      allowedCIDRs: [],
    };

    it.each([
      ["an HAProxy Pod's address", '10.9.0.1', '10.9.0.9'],
      ['a NAT64 form of loopback', 'fd00::1', '64:ff9b::7f00:1'],
      ['an address outside the Pod CIDR', '10.9.0.1', '203.0.113.7'],
    ])(
      'refuses %s on the slot path as on a full render: it renders in full',
      async (_, served, address) => {
        const snapshot = { ...(await snapshotOf(3)), endpointRules: rules };
        const previous = fullRender(snapshot);
        const changed = withEndpoints(snapshot, 2, [served, address]);
        expect(endpointUpdate(previous, changed, buildBackend)).toEqual({
          kind: 'render',
          reason: 'BackendLeavesEndpointsOut',
          message: 'backend app:svc2:80 leaves endpoints out',
        });
        const full = fullRender(changed).model;
        expect(full.model.backends[2]?.servers.map((server) => server.address)).toEqual([served]);
        expect(full.warnings).toEqual([
          expect.objectContaining({
            reason: 'EndpointRefused',
            message: expect.stringContaining(`lists ${address}, `) as unknown,
          }),
        ]);
      },
    );

    it('re-evaluates every backend when a new own Pod takes an address a backend uses', async () => {
      const snapshot = {
        ...withEndpoints(await snapshotOf(3), 1, ['10.9.0.1', '10.9.0.9']),
        endpointRules: { ...rules, ownPods: [] },
      };
      const previous = fullRender(snapshot);
      expect(previous.model.warnings).toEqual([]);
      // The same slices; only the rules object is new (ClusterWatch replaces it on a change).
      const moved = { ...snapshot, endpointRules: rules };
      expect(endpointUpdate(previous, moved, buildBackend)).toEqual({
        kind: 'render',
        reason: 'BackendLeavesEndpointsOut',
        message: 'backend app:svc1:80 leaves endpoints out',
      });
    });

    it('renders in full when a change of the rules lets a refused endpoint in', async () => {
      const snapshot = {
        ...withEndpoints(await snapshotOf(3), 1, ['10.9.0.1', '203.0.113.7']),
        endpointRules: rules,
      };
      const previous = fullRender(snapshot);
      const allowed = {
        ...snapshot,
        endpointRules: { ...rules, allowedCIDRs: ['203.0.113.0/24'] },
      };
      expect(endpointUpdate(previous, allowed, buildBackend)).toEqual({
        kind: 'render',
        reason: 'EndpointsLeftOut',
        message: 'the last render left endpoints out',
      });
      expect(fullRender(allowed).model.model.backends[1]?.servers.map((s) => s.address)).toEqual([
        '10.9.0.1',
        '203.0.113.7',
      ]);
    });
  });

  it('needs a full render when the template does not write slots as server lines', async () => {
    const template = defaultTemplateConfig();
    const spec = template.spec as { haproxyConfig: { template: string } };
    spec.haproxyConfig.template = spec.haproxyConfig.template
      .replace('for slot in backend.slots', 'for slot in backend.servers')
      .replace('{% if slot.spare %} disabled{% endif %}', '');
    const snapshot = await snapshotOf(3);
    const previous = fullRender(snapshot, template);
    const changed = withEndpoints(snapshot, 0, ['10.9.0.1']);
    expect(endpointUpdate(previous, changed, buildBackend)).toMatchObject({ kind: 'render' });
  });

  it('is unchanged when the endpoints are the same', async () => {
    const snapshot = await snapshotOf(3);
    const previous = fullRender(snapshot);
    const same = withEndpoints(snapshot, 0, ['10.0.0.2', '10.0.0.1']);
    expect(endpointUpdate(previous, same, buildBackend)).toEqual({ kind: 'unchanged' });
  });

  describe('backend variants', () => {
    /** An Ingress for svc1 whose annotations ask options: a backend variant of svc1's port. */
    function annotated(name: string, host: string) {
      const view = readIngress({
        kind: 'Ingress',
        metadata: {
          namespace: 'app',
          name,
          annotations: {
            'nginx.ingress.kubernetes.io/proxy-body-size': '8m',
            'nginx.ingress.kubernetes.io/use-regex': 'true',
          },
        },
        spec: {
          ingressClassName: 'haptic',
          rules: [
            {
              host,
              http: {
                paths: [
                  {
                    path: '/app(/|$)(.*)',
                    pathType: 'Prefix',
                    backend: { service: { name: 'svc1', port: { number: 80 } } },
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

    it.each([
      ['beside its plain backend', false, ['app:svc1:80', 'variant']],
      ['alone', true, ['variant']],
    ])(
      "gives the slot changes of a Service's endpoints under its variant's name, %s, as a full render does",
      async (_what, alone, names) => {
        const base = await snapshotOf(3);
        const ingresses = alone
          ? base.ingresses.map((view, i) => (i === 1 ? annotated('ing1', 'h1.example.com') : view))
          : [...base.ingresses, annotated('big', 'big.example.com')];
        const snapshot = { ...base, ingresses };
        const previous = fullRender(snapshot);
        const variant = previous.model.model.backends.find((backend) =>
          /^app:svc1:80:[0-9a-f]{16}$/.test(backend.name),
        );
        expect(variant?.options.maxBodyBytes).toBe(8 * 1024 ** 2);
        expect(texts(previous)['haproxy.cfg']).toContain(`backend ${variant?.name ?? '?'}\n`);
        const changed = withEndpoints(snapshot, 1, ['10.9.0.1', '10.9.0.2']);
        const update = endpointUpdate(previous, changed, buildBackend);
        expect(update.kind, JSON.stringify(update)).toBe('slots');
        if (update.kind !== 'slots') return;
        const changedBackends = [...new Set(update.changes.map((change) => change.backend))];
        expect(changedBackends).toEqual(
          names.map((name) => (name === 'variant' ? variant?.name : name)),
        );
        const slotsOf = (name: string | undefined) =>
          update.changes
            .filter((change) => change.backend === name)
            .map(({ server, address, state }) => `${server} ${address} ${state}`)
            .sort();
        const variantSlots = slotsOf(variant?.name);
        expect(variantSlots.map((slot) => slot.replace(/^s[0-9]+ /, ''))).toEqual([
          '10.9.0.1 ready',
          '10.9.0.2 ready',
        ]);
        // The plain backend of the same Service port changes the same slots.
        if (!alone) expect(slotsOf('app:svc1:80')).toEqual(variantSlots);
        const expected = fullRender(changed);
        expect(texts(update)).toEqual(texts(expected));
        expect(update.model.model.backends).toEqual(expected.model.model.backends);
        expect(runtimePlan(setText(previous), setText(update))).toEqual(
          expect.objectContaining({ runtime: true, changes: update.changes }),
        );
      },
    );
  });
});
