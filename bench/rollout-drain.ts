/**
 * Requests lost while the HAProxy Deployment rolls: `helm install` of the chart on a running
 * node (its own namespace and IngressClass; the image already on the node), one sample backend
 * behind one Ingress, then `clients` HTTP keep-alive clients sending requests back to back while
 * `kubectl rollout restart deployment/haptic-haproxy` replaces every HAProxy Pod.
 *
 * The clients stand in for a load balancer in front of the haptic-haproxy Service, as
 * kube-proxy behaves: a new connection goes to a ready endpoint of the Service's
 * EndpointSlices (read every `endpointPollMs`), an open connection stays where it is until
 * HAProxy closes it. They reach the Pods by their addresses; no request is retried. A request
 * is lost when it fails (connection refused or reset, no answer) or does not answer 200 from
 * the backend.
 *
 *   HAPTIC_BENCH_KUBECONFIG=/var/lib/haptic-node/node/admin.kubeconfig \
 *     node bench/rollout-drain.ts [clients=16] [endpointPollMs=250] [key=value ...]
 *
 * Further arguments are `helm install --set` values: preRolloutValidation.enabled=false when the
 * node's image predates the chart (its embedded schema refuses the chart's newer values),
 * haproxy.drain.delaySeconds=0 for the control without the delay. The failures are printed
 * against the times the ready addresses changed.
 *
 * The last line is JSON: sent, failed, failures by kind, replaced Pods, rollout seconds, and
 * FailedPreStopHook events of the namespace.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { createConnection } from 'node:net';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DiscoveryV1Api, KubeConfig } from '@kubernetes/client-node';
import { execa } from 'execa';
import { readChartImage } from '../dev/lib/chart-image.ts';
import { sampleBackendObjects } from '../dev/lib/sample-backend.ts';
import { projectRoot, toolPath } from '../dev/lib/tools.ts';

const clients = Number(process.argv[2] ?? 16);
const endpointPollMs = Number(process.argv[3] ?? 250);
const extraSets = process.argv.slice(4).flatMap((set) => ['--set', set]);
const kubeconfigPath = process.env.HAPTIC_BENCH_KUBECONFIG ?? '';
if (kubeconfigPath === '') {
  process.stderr.write('Set HAPTIC_BENCH_KUBECONFIG to the kubeconfig of a running node.\n');
  process.exit(2);
}
const namespace = `drain-${randomBytes(3).toString('hex')}`;
const host = 'drain.example.com';
const env = { KUBECONFIG: kubeconfigPath };
const kubectl = (args: readonly string[], input?: string) =>
  execa(toolPath('kubectl'), args, { env, ...(input === undefined ? {} : { input }) });

/** The ready addresses of the haptic-haproxy Service, as kube-proxy would route to them. */
async function readyAddresses(discovery: DiscoveryV1Api): Promise<string[]> {
  const slices = await discovery.listNamespacedEndpointSlice({
    namespace,
    labelSelector: 'kubernetes.io/service-name=haptic-haproxy',
  });
  return slices.items.flatMap((slice) =>
    (slice.endpoints ?? []).flatMap((endpoint) =>
      endpoint.conditions?.ready === true ? endpoint.addresses : [],
    ),
  );
}

interface Tally {
  sent: number;
  failed: number;
  readonly kinds: Map<string, number>;
  /** "<seconds since the bench started> <address> <kind>" of each failure. */
  readonly log: string[];
}

const benchStarted = performance.now();
const seconds = (): string => ((performance.now() - benchStarted) / 1000).toFixed(2);

function fail(tally: Tally, address: string, kind: string): void {
  tally.failed += 1;
  tally.kinds.set(kind, (tally.kinds.get(kind) ?? 0) + 1);
  tally.log.push(`${seconds()} ${address} ${kind}`);
}

/**
 * A client's connection, as kube-proxy makes it: each new connection goes to a ready address
 * chosen then (round robin from a random start); an open one stays where it is.
 */
class BalancedAgent extends Agent {
  /** The address of the client's current (or last) connection. */
  address = '';
  readonly #endpoints: () => readonly string[];
  #turn = Math.floor(Math.random() * 1000);

  constructor(endpoints: () => readonly string[]) {
    super({ keepAlive: true, maxSockets: 1 });
    this.#endpoints = endpoints;
  }

  override createConnection(): Duplex {
    const ready = this.#endpoints();
    this.address = ready[this.#turn++ % Math.max(ready.length, 1)] ?? this.address;
    return createConnection({ host: this.address, port: 8080 });
  }
}

/** One request over the client's agent; resolves when answered or failed, never rejects. */
function send(agent: BalancedAgent, tally: Tally): Promise<void> {
  tally.sent += 1;
  return new Promise((resolve) => {
    const req = request(
      { host: 'haptic-haproxy', port: 8080, path: '/', headers: { host }, agent, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          if (res.statusCode !== 200 || body !== 'blue /')
            fail(tally, agent.address, `status ${res.statusCode}`);
          resolve();
        });
        res.on('error', (error: NodeJS.ErrnoException) => {
          fail(tally, agent.address, error.code ?? error.message);
          resolve();
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error: NodeJS.ErrnoException) => {
      fail(tally, agent.address, error.code ?? error.message);
      resolve();
    });
    req.end();
  });
}

/** A keep-alive client: sends requests back to back over one connection at a time. */
async function client(endpoints: () => readonly string[], tally: Tally, stop: () => boolean) {
  const agent = new BalancedAgent(endpoints);
  while (!stop()) await send(agent, tally);
  agent.destroy();
}

async function waitForServing(addresses: readonly string[]): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const tally: Tally = { sent: 0, failed: 0, kinds: new Map(), log: [] };
    for (const address of addresses) {
      const agent = new BalancedAgent(() => [address]);
      await send(agent, tally);
      agent.destroy();
    }
    if (tally.failed === 0) return;
    await sleep(500);
  }
  throw new Error(`HAProxy ${addresses.join(', ')} did not serve ${host} within 5 minutes`);
}

const haproxyPods = async (): Promise<string[]> =>
  (
    await kubectl([
      ...['get', 'pods', '-n', namespace, '-l', 'app.kubernetes.io/component=loadbalancer'],
      ...['-o', 'jsonpath={.items[*].metadata.name}'],
    ])
  ).stdout
    .split(' ')
    .filter((name) => name !== '');

try {
  await kubectl(['create', 'namespace', namespace]);
  await execa(
    toolPath('helm'),
    [
      ...['install', 'haptic', join(projectRoot, 'chart'), '-n', namespace],
      ...['--set', 'controller.replicas=1', '--set', `ingressClass.name=${namespace}`],
      // The clients reach the Pods as a load balancer would; no load balancer is waited for.
      ...['--set', 'haproxy.service.type=ClusterIP'],
      ...extraSets,
      ...['--wait', '--timeout=5m'],
    ],
    { env },
  );
  const image = readChartImage().reference;
  const objects = [
    ...sampleBackendObjects('blue', namespace, image),
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'drain', namespace },
      spec: {
        ingressClassName: namespace,
        rules: [
          {
            host,
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'blue', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    },
  ];
  await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
  await kubectl(['rollout', 'status', 'deployment/blue', '-n', namespace, '--timeout=3m']);
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  let endpoints = await readyAddresses(discovery);
  await waitForServing(endpoints);

  const run = { stopped: false };
  /** When the ready addresses changed, for reading the failures against. */
  const timeline: string[] = [];
  const poller = (async () => {
    while (!run.stopped) {
      const next = await readyAddresses(discovery).catch(() => endpoints);
      if (next.join() !== endpoints.join()) timeline.push(`${seconds()} ready: ${next.join(', ')}`);
      endpoints = next;
      await sleep(endpointPollMs);
    }
  })();
  const tally: Tally = { sent: 0, failed: 0, kinds: new Map(), log: [] };
  const load = Array.from({ length: clients }, () =>
    client(
      () => endpoints,
      tally,
      () => run.stopped,
    ),
  );
  await sleep(3000);
  const before = await haproxyPods();
  const started = performance.now();
  timeline.push(`${seconds()} rollout restart`);
  await kubectl(['rollout', 'restart', 'deployment/haptic-haproxy', '-n', namespace]);
  await kubectl([
    ...['rollout', 'status', 'deployment/haptic-haproxy', '-n', namespace, '--timeout=10m'],
  ]);
  // Until the old Pods are gone: their drain ends with the last one.
  while ((await haproxyPods()).some((name) => before.includes(name))) await sleep(500);
  const rolloutSeconds = Math.round((performance.now() - started) / 100) / 10;
  await sleep(3000);
  run.stopped = true;
  await Promise.all([...load, poller]);
  // A preStop hook cut short (the container ended under it) is reported as failed.
  const failedHooks = (
    await kubectl([
      ...['get', 'events', '-n', namespace, '--field-selector', 'reason=FailedPreStopHook'],
      ...['-o', 'name'],
    ])
  ).stdout
    .split('\n')
    .filter((line) => line !== '').length;
  const events = [...timeline, ...tally.log.map((line) => `${line} (failed)`)];
  events.sort((a, b) => Number.parseFloat(a) - Number.parseFloat(b));
  process.stdout.write(`${events.slice(0, 60).join('\n')}\n`);
  process.stdout.write(
    `${tally.sent} requests from ${clients} keep-alive clients across the rollout of ${before.length} HAProxy Pods (${rolloutSeconds} s): ${tally.failed} failed\n`,
  );
  process.stdout.write(
    `${JSON.stringify({
      sent: tally.sent,
      failed: tally.failed,
      failures: Object.fromEntries(tally.kinds),
      replacedPods: before.length,
      rolloutSeconds,
      clients,
      failedHooks,
    })}\n`,
  );
} finally {
  await execa(toolPath('helm'), ['uninstall', 'haptic', '-n', namespace, '--wait'], {
    env,
    reject: false,
  });
  await kubectl(['delete', 'namespace', namespace, '--wait=false']).catch(() => undefined);
}
