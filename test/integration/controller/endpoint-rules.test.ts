/**
 * Endpoints pointing at the data plane itself, through the controller's pipeline as
 * `haptic run` builds it (ClusterWatch → routing model → render, lint and a real `haproxy -c`
 * in the check sandbox) against the real API server: an EndpointSlice naming an HAProxy Pod's
 * address, a NAT64 form of 127.0.0.1, an address outside the Nodes' Pod CIDRs, or an FQDN that
 * resolves to an own Pod's address is left out with an EndpointRefused Event naming the address,
 * and the other endpoints are served. The rules hold on the slot path too, and a new own Pod
 * that takes a served address re-evaluates the backend.
 *
 * The release's "own Pods" are Pods of the test namespace with the selector's labels, held
 * Pending by a nodeSelector nothing matches, their addresses written into their status as a
 * kubelet writes them. The Pod CIDR is a Node object of the test's own (unschedulable, tainted,
 * no kubelet behind it) with spec.podCIDRs set, as node IPAM sets it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  CoreV1Api,
  DiscoveryV1Api,
  NetworkingV1Api,
  PatchStrategy,
  type V1EndpointSlice,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultTemplateConfig } from '../../../bench/controller-fixture.ts';
import { type LocalSandbox, startLocalSandbox } from '../../../dev/lib/local-sandbox.ts';
import { configFileName } from '../../../src/agent-api/api-types.ts';
import { ClusterWatch, type WatchedKind } from '../../../src/controller/watch/cluster-watch.ts';
import {
  ConfigPipeline,
  type PipelineSuccess,
} from '../../../src/controller/pipeline/config-pipeline.ts';
import { ingressEvents } from '../../../src/controller/routing/ingress-events.ts';
import { StatusReporter } from '../../../src/api/status-reporter.ts';
import { makeKubeClients } from '../../../src/kube/kube-clients.ts';
import { RequestCounter } from '../../../src/kube/request-counter.ts';
import { adminKubeConfig, createTestNamespace } from '../../support/cluster.ts';
import { eventually } from '../../support/eventually.ts';

const kubeConfig = adminKubeConfig();
const core = kubeConfig.makeApiClient(CoreV1Api);
const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
const networking = kubeConfig.makeApiClient(NetworkingV1Api);
const tmp = mkdtempSync(join(tmpdir(), 'endpoint-rules-'));
const ingressClass = `endpoint-rules-${randomBytes(3).toString('hex')}`;
const nodeName = `${ingressClass}-node`;
/** The test Node's Pod CIDR: a range nothing else on the run's node uses. */
const podCidr = '10.251.0.0/24';
const ownLabels = {
  'app.kubernetes.io/instance': ingressClass,
  'app.kubernetes.io/component': 'loadbalancer',
};
const served = ['10.251.0.7', '10.251.0.8'];
const haproxyPod = '10.251.0.10';

let namespace = '';
let sandbox: LocalSandbox;
let pipeline: ConfigPipeline;
let watch: ClusterWatch;
const changes: WatchedKind[] = [];

/** An own Pod that holds `address` (Pending: nothing runs it). */
async function ownPod(name: string, address: string): Promise<void> {
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, namespace, labels: ownLabels },
      spec: {
        nodeSelector: { 'haptic.test/no-such-node': 'true' },
        containers: [{ name: 'haproxy', image: 'localhost/none:0' }],
      },
    },
  });
  await core.patchNamespacedPodStatus(
    {
      namespace,
      name,
      body: { status: { podIP: address, podIPs: [{ ip: address }] } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

function slice(
  name: string,
  addressType: 'IPv4' | 'IPv6' | 'FQDN',
  addresses: readonly string[],
): V1EndpointSlice {
  return {
    metadata: { name, namespace, labels: { 'kubernetes.io/service-name': 'web' } },
    addressType,
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: addresses.map((address) => ({ addresses: [address], conditions: { ready: true } })),
  };
}

async function putSlice(body: V1EndpointSlice): Promise<void> {
  const name = body.metadata?.name ?? '';
  const current = await discovery
    .readNamespacedEndpointSlice({ namespace, name })
    .catch(() => undefined);
  if (current === undefined) {
    await discovery.createNamespacedEndpointSlice({ namespace, body });
    return;
  }
  await discovery.replaceNamespacedEndpointSlice({
    namespace,
    name,
    body: Object.assign(current, { endpoints: body.endpoints ?? [] }),
  });
}

/** The `server` lines of the web backend in the rendered haproxy.cfg, not the spare slots. */
function webServers(outcome: PipelineSuccess): string[] {
  const config = Buffer.from(
    outcome.files.find((file) => file.path === configFileName)?.content ?? new Uint8Array(),
  ).toString('utf8');
  const backend = config.split(/\nbackend /).find((part) => part.startsWith(`${namespace}:web:`));
  return (backend ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('server ') && !line.includes(' disabled'))
    .map((line) => line.split(/\s+/)[2] ?? '')
    .sort();
}

async function run(): Promise<PipelineSuccess> {
  const outcome = await pipeline.run(defaultTemplateConfig(), watch.snapshot(), new Date());
  if (!outcome.ok) throw new Error(`${outcome.stage}: ${outcome.message}`);
  return outcome;
}

beforeAll(async () => {
  namespace = await createTestNamespace('endpoint-rules');
  // Pods need the namespace's default ServiceAccount, which its controller makes a moment later.
  await core
    .createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } })
    .catch(() => undefined);
  await core.createNode({
    body: {
      metadata: { name: nodeName },
      spec: {
        podCIDR: podCidr,
        podCIDRs: [podCidr],
        unschedulable: true,
        taints: [{ key: 'haptic.test/no-kubelet', value: 'true', effect: 'NoSchedule' }],
      },
    },
  });
  await ownPod('haptic-haproxy-0', haproxyPod);
  await core.createNamespacedService({
    namespace,
    body: {
      metadata: { name: 'web', namespace },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], clusterIP: 'None' },
    },
  });
  await networking.createNamespacedIngress({
    namespace,
    body: {
      metadata: { name: 'shop', namespace },
      spec: {
        ingressClassName: ingressClass,
        rules: [
          {
            host: 'shop.example.com',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'web', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    },
  });
  await putSlice(slice('web-ipv4', 'IPv4', served));
  sandbox = await startLocalSandbox({ dir: join(tmp, 'sandbox') });
  pipeline = new ConfigPipeline({ ingressClass, check: { socket: sandbox.socket } });
  watch = new ClusterWatch({
    clients: makeKubeClients(kubeConfig, {
      counter: new RequestCounter(),
      userAgent: 'haptic-test/endpoint-rules',
    }),
    namespace,
    templateConfigName: 'haptic',
    ingressClass,
    ownPods: {
      namespace,
      labelSelector: `app.kubernetes.io/instance=${ingressClass},app.kubernetes.io/component in (controller,loadbalancer)`,
    },
    onChange: (kind) => changes.push(kind),
    logger: pino({ level: 'silent' }),
  });
  await watch.start();
}, 120_000);

afterAll(async () => {
  await watch.stop();
  await pipeline.close();
  await sandbox.stop();
  await core.deleteNode({ name: nodeName });
  await core.deleteNamespace({ name: namespace });
  rmSync(tmp, { recursive: true, force: true });
});

describe('endpoints pointing at the data plane', () => {
  it("knows the own Pods' addresses and takes the Pod CIDRs from the Nodes", () => {
    const rules = watch.snapshot().endpointRules;
    expect(rules.ownPods).toEqual([
      { name: `${namespace}/haptic-haproxy-0`, addresses: [haproxyPod] },
    ]);
    expect(rules.podCIDRsFrom).toBe('nodes');
    expect(rules.podCIDRs).toContain(podCidr);
  });

  it('serves the endpoints inside the Pod CIDR and leaves the rest out with an Event naming each address', async () => {
    const clean = await run();
    expect(webServers(clean)).toEqual(served.map((address) => `${address}:8080`));
    expect(clean.model.warnings).toEqual([]);

    // An HAProxy Pod's own address, an address outside the Pod CIDR, a NAT64 form of
    // 127.0.0.1, and an FQDN whose name resolves to the HAProxy Pod's address.
    await putSlice(slice('web-ipv4', 'IPv4', [...served, haproxyPod, '203.0.113.7']));
    await putSlice(slice('web-ipv6', 'IPv6', ['64:ff9b::7f00:1']));
    await putSlice(slice('web-fqdn', 'FQDN', [haproxyPod]));
    const outcome = await eventually(
      'the slices and the FQDN resolution in the snapshot',
      run,
      (result) => result.model.warnings.length === 4,
    );
    expect(webServers(outcome)).toEqual(served.map((address) => `${address}:8080`));
    const where = (name: string) =>
      `EndpointSlice ${namespace}/${name} of Service ${namespace}/web`;
    const own = `the address of Pod ${namespace}/haptic-haproxy-0, one of the ingress controller's own Pods (HAProxy or its controller), so requests sent there would come back into HAProxy; HAProxy does not send traffic there.`;
    const messages = outcome.model.warnings.map((warning) => warning.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        `${where('web-ipv4')} lists ${haproxyPod}, ${own} List the addresses of the Service's real endpoints.`,
        expect.stringContaining(
          `${where('web-ipv4')} lists 203.0.113.7, outside the cluster's Pod CIDRs (`,
        ) as unknown,
        `${where('web-ipv6')} lists 64:ff9b::7f00:1, a NAT64 address (64:ff9b::/96) that carries 127.0.0.1, a loopback address (the HAProxy host itself); HAProxy does not send traffic there. List the addresses of the Service's real endpoints.`,
        // An FQDN slice may name an address in dotted form: it resolves to itself.
        `${where('web-fqdn')} lists ${haproxyPod}, ${own} List the addresses of the Service's real endpoints.`,
      ]),
    );
    expect(messages.find((text) => text.includes('203.0.113.7'))).toContain(
      `${podCidr}, from the Nodes' spec.podCIDRs)`,
    );

    // The Event the reconciler writes for them, on the Ingress.
    const [event] = ingressEvents(outcome.model);
    expect(event?.reason).toBe('EndpointRefused');
    const ingress = await networking.readNamespacedIngress({ namespace, name: 'shop' });
    const reporter = new StatusReporter({
      clients: makeKubeClients(kubeConfig, {
        counter: new RequestCounter(),
        userAgent: 'haptic-test/endpoint-rules',
      }),
      instance: 'endpoint-rules-test',
      logger: pino({ level: 'silent' }),
    });
    await reporter.ingressEvent(
      { namespace, name: 'shop', uid: ingress.metadata?.uid ?? '' },
      'Warning',
      { reason: event?.reason ?? '', message: event?.message ?? '' },
    );
    const events = await core.listNamespacedEvent({
      namespace,
      fieldSelector: 'involvedObject.name=shop',
    });
    const written = events.items.find((item) => item.reason === 'EndpointRefused');
    expect(written?.type).toBe('Warning');
    expect(written?.message).toContain(`lists ${haproxyPod}, the address of Pod`);
    expect(written?.message).toContain('lists 64:ff9b::7f00:1, a NAT64 address');
    expect(written?.message).toContain('lists 203.0.113.7, outside the cluster');
  });

  it('holds the rules on the slot path, and re-evaluates the backend when an own Pod takes a served address', async () => {
    await discovery.deleteNamespacedEndpointSlice({ namespace, name: 'web-ipv6' });
    await discovery.deleteNamespacedEndpointSlice({ namespace, name: 'web-fqdn' });
    await putSlice(slice('web-ipv4', 'IPv4', served));
    const clean = await eventually(
      'a render without refusals',
      run,
      (result) => result.model.warnings.length === 0,
    );

    // An endpoint change alone goes to the slot path, which must not let the address in.
    await putSlice(slice('web-ipv4', 'IPv4', [served[0] ?? '', haproxyPod]));
    const update = await eventually(
      'the slice change in the snapshot',
      () => Promise.resolve(pipeline.updateEndpoints(clean, watch.snapshot())),
      (result) => result !== clean,
    );
    expect(update).toBe(`backend ${namespace}:web:80 leaves endpoints out`);

    // A second HAProxy Pod comes up at an address a backend serves: the rules change, the
    // watch says so, and the next update renders in full, leaving that address out.
    await putSlice(slice('web-ipv4', 'IPv4', served));
    const before = await eventually(
      'the slice back to the served addresses',
      run,
      (result) => result.model.warnings.length === 0,
    );
    changes.length = 0;
    await ownPod('haptic-haproxy-1', served[1] ?? '');
    await eventually(
      'an EndpointRules change',
      () => Promise.resolve([...changes]),
      (kinds) => kinds.includes('EndpointRules'),
    );
    expect(pipeline.updateEndpoints(before, watch.snapshot())).toBe(
      `backend ${namespace}:web:80 leaves endpoints out`,
    );
    const after = await run();
    expect(webServers(after)).toEqual([`${served[0] ?? ''}:8080`]);
    expect(after.model.warnings.map((warning) => warning.message)).toEqual([
      expect.stringContaining(
        `lists ${served[1] ?? ''}, the address of Pod ${namespace}/haptic-haproxy-1`,
      ),
    ]);
  });
});
