/**
 * Time from an Ingress change to both HAProxy replicas serving it: the real node
 * (dev/lib/local-node.ts), `helm install` of the chart, two haptic-haproxy replicas and one
 * controller run locally as the chart's Deployments say (dev/local-pods; the Deployments' own
 * Pods stay Pending: their nodeSelector matches no node), two backends; then the Ingress is switched between
 * the backends `changes` times and both replicas are polled every 10 ms until they answer from
 * the new backend. Measured from the start of the API write (the PUT through the client).
 *
 *   node bench/controller-propagation.ts [changes=20]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DiscoveryV1Api,
  KubeConfig,
  NetworkingV1Api,
  CoreV1Api,
  type V1Ingress,
} from '@kubernetes/client-node';
import { execa } from 'execa';
import { startLocalNode } from '../dev/lib/local-node.ts';
import { startNetnsHost } from '../dev/lib/netns-host.ts';
import { projectRoot, toolPath } from '../dev/lib/tools.ts';
import {
  type HAProxyReplica,
  controllerReplica,
  startHAProxyReplica,
} from '../dev/local-pods/release-pods.ts';

const changes = Number(process.argv[2] ?? 20);
const dir = mkdtempSync(join(tmpdir(), 'bench-propagation-'));
const cluster = await startLocalNode(join(dir, 'cluster'));
const stops: (() => Promise<unknown>)[] = [() => cluster.stop()];
try {
  const env = { KUBECONFIG: cluster.kubeconfigPath };
  await execa(
    toolPath('helm'),
    [
      ...['install', 'haptic', join(projectRoot, 'chart'), '-n', 'haptic', '--create-namespace'],
      ...['--set', 'controller.nodeSelector.haptic-test=local-pods'],
      ...['--set', 'haproxy.nodeSelector.haptic-test=local-pods'],
    ],
    { env },
  );
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  const pods = { kubeConfig: kc, namespace: 'haptic', dir: join(dir, 'pods') };
  const replicas: HAProxyReplica[] = [];
  for (const [i, address] of ['127.0.0.2', '127.0.0.3'].entries()) {
    const replica = await startHAProxyReplica(pods, `haptic-haproxy-${i}`, address);
    stops.push(() => replica.pod.stop());
    replicas.push(replica);
  }
  const controller = await controllerReplica(pods, 'haptic-controller-0', '127.0.0.11', {
    agents: replicas,
  });
  stops.push(() => controller.pod.stop());
  await controller.start();

  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const networking = kc.makeApiClient(NetworkingV1Api);
  for (const [i, name] of ['blue', 'green'].entries()) {
    // Each backend is a test host (a network namespace), reached like a Pod at an IPv4 address.
    const host = await startNetnsHost({ body: name, logFile: join(dir, `backend-${i}.log`) });
    stops.push(() => host.stop());
    const { address, port } = host;
    await core.createNamespacedService({
      namespace: 'haptic',
      body: {
        metadata: { name },
        spec: { clusterIP: 'None', ports: [{ name: 'http', port: 80 }] },
      },
    });
    await discovery.createNamespacedEndpointSlice({
      namespace: 'haptic',
      body: {
        metadata: { name: `${name}-1`, labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port }],
        endpoints: [{ addresses: [address] }],
      },
    });
  }
  const ingress = (service: string): V1Ingress => ({
    metadata: { name: 'web', namespace: 'haptic' },
    spec: {
      ingressClassName: 'haptic',
      rules: [
        {
          host: 'web.example.com',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: service, port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  });
  const get = (address: string): Promise<string> =>
    new Promise((resolve) => {
      const call = request(
        {
          host: address,
          port: 8080,
          path: '/',
          headers: { host: 'web.example.com' },
          agent: false,
          timeout: 1000,
        },
        (response: IncomingMessage) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            resolve(Buffer.concat(chunks).toString());
          });
        },
      );
      call.on('error', () => {
        resolve('');
      });
      call.end();
    });
  const served = async (name: string): Promise<boolean> =>
    (await Promise.all(replicas.map((r) => get(r.address)))).every((a) => a === `${name} /`);
  await networking.createNamespacedIngress({ namespace: 'haptic', body: ingress('blue') });
  while (!(await served('blue'))) await sleep(20);
  const times: number[] = [];
  for (let i = 0; i < changes; i += 1) {
    const name = i % 2 === 0 ? 'green' : 'blue';
    await sleep(300);
    const current = await networking.readNamespacedIngress({ name: 'web', namespace: 'haptic' });
    const started = performance.now();
    await networking.replaceNamespacedIngress({
      name: 'web',
      namespace: 'haptic',
      body: {
        spec: ingress(name).spec ?? {},
        metadata: {
          name: 'web',
          namespace: 'haptic',
          resourceVersion: current.metadata?.resourceVersion ?? '',
        },
      },
    });
    while (!(await served(name))) await sleep(10);
    times.push(performance.now() - started);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number): string =>
    (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0).toFixed(0);
  process.stdout.write(
    `Ingress change → both replicas serving (${changes} changes): p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms\n`,
  );
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
