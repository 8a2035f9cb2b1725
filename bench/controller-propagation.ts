/**
 * Time from an Ingress change to both HAProxy replicas serving it, on the real node
 * (dev/lib/local-node.ts): `helm install` of the chart as a user runs it (the controller and
 * two haptic-haproxy replicas as Pods of the product image), two sample backend Deployments;
 * then the Ingress is switched between the backends `changes` times and both replicas are
 * polled by Pod IP every 10 ms until they answer from the new backend. Measured from the start
 * of the API write (the PUT through the client).
 *
 *   node bench/controller-propagation.ts [changes=20]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig, NetworkingV1Api, type V1Ingress } from '@kubernetes/client-node';
import { execa } from 'execa';
import { startLocalNode } from '../dev/lib/local-node.ts';
import { sampleBackendObjects } from '../dev/lib/sample-backend.ts';
import { projectRoot, toolPath } from '../dev/lib/tools.ts';

const changes = Number(process.argv[2] ?? 20);
const dir = mkdtempSync(join(tmpdir(), 'bench-propagation-'));
const cluster = await startLocalNode(join(dir, 'cluster'));
try {
  const env = { KUBECONFIG: cluster.kubeconfigPath };
  const kubectl = (args: readonly string[], input?: string) =>
    execa(toolPath('kubectl'), args, { env, ...(input === undefined ? {} : { input }) });
  await execa(
    toolPath('helm'),
    [
      ...['install', 'haptic', join(projectRoot, 'chart'), '-n', 'haptic', '--create-namespace'],
      ...['--set', 'controller.replicas=1'],
    ],
    { env },
  );
  const backends = ['blue', 'green'].flatMap((name) =>
    sampleBackendObjects(name, 'haptic', cluster.image),
  );
  await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: backends }),
  );
  for (const deployment of ['haptic-controller', 'haptic-haproxy', 'blue', 'green']) {
    await kubectl([
      'rollout',
      'status',
      `deployment/${deployment}`,
      '-n',
      'haptic',
      '--timeout=3m',
    ]);
  }
  const addresses = (
    await kubectl([
      ...['get', 'pods', '-n', 'haptic', '-l', 'app.kubernetes.io/component=loadbalancer'],
      ...['-o', 'jsonpath={.items[*].status.podIP}'],
    ])
  ).stdout.split(' ');
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  const networking = kc.makeApiClient(NetworkingV1Api);
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
    (await Promise.all(addresses.map((address) => get(address)))).every((a) => a === `${name} /`);
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
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
