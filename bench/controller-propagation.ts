/**
 * Time from a change to both HAProxy replicas serving it, on the real node: `helm install` of
 * the chart as a user runs it (the controller and two haptic-haproxy replicas as Pods of the
 * product image) and two sample backend Deployments (blue, green).
 *
 * 1. Ingress changes: one Ingress switched between the backends `changes` times.
 * 2. Endpoint changes at `backends` backends: that many selector-less Services, each with an
 *    EndpointSlice naming the blue Pod and a host rule in one of the Ingresses; then
 *    `endpointChanges` times one Service's endpoint moves between the blue and the green Pod
 *    (a slot emptied and another filled). Reloads are counted across these changes
 *    (`haptic_reloads_total` of the controller), HAProxy's processes are compared before and
 *    after (`haptic agent state` in each Pod), and the files the agents hold afterwards are
 *    compared with a fresh render: the controller is restarted, and a fresh controller that
 *    finds its configuration on every agent without changing any (generations unchanged)
 *    rendered the same files.
 * Each change is measured from the start of its API write until both replicas, polled by Pod
 * IP, answer from the new backend (polled every 2 ms over a kept-alive connection per
 * replica: a few ms of granularity). Where the time of an endpoint change goes is read from the Pods' logs
 * afterwards (stageTimes).
 *
 *   node bench/controller-propagation.ts [changes=20] [backends=1000] [endpointChanges=200]
 *
 * With HAPTIC_BENCH_KUBECONFIG set to a running node's kubeconfig (`make cluster-up`), the
 * bench uses that node, in a namespace and IngressClass of its own; otherwise it starts one.
 * The last line is JSON: endpointP50Ms, ingressP50Ms, reloads, …
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DiscoveryV1Api,
  KubeConfig,
  NetworkingV1Api,
  type V1EndpointSlice,
  type V1Ingress,
  type V1IngressRule,
} from '@kubernetes/client-node';
import { execa } from 'execa';
import { imageArchivePath, readChartImage } from '../dev/lib/chart-image.ts';
import { startLocalNode } from '../dev/lib/local-node.ts';
import { containerdSocket } from '../dev/lib/node/node-config.ts';
import { importImage } from '../dev/lib/node/node-images.ts';
import { sampleBackendObjects } from '../dev/lib/sample-backend.ts';
import { projectRoot, toolPath } from '../dev/lib/tools.ts';

const changes = Number(process.argv[2] ?? 20);
const backends = Number(process.argv[3] ?? 1000);
const endpointChanges = Number(process.argv[4] ?? 200);
/** Rules per Ingress of the endpoint phase. */
const rulesPerIngress = 100;

const dir = mkdtempSync(join(tmpdir(), 'bench-propagation-'));
const shared = process.env.HAPTIC_BENCH_KUBECONFIG;
const cluster =
  shared === undefined || shared === '' ? await startLocalNode(join(dir, 'cluster')) : undefined;
const kubeconfigPath = cluster?.kubeconfigPath ?? shared ?? '';
// A shared node runs the product image `make image` built last.
if (cluster === undefined) await importImage(containerdSocket, imageArchivePath(readChartImage()));
const image = cluster?.image ?? readChartImage().reference;
const namespace = cluster === undefined ? `bench-${randomBytes(3).toString('hex')}` : 'haptic';
const ingressClass = cluster === undefined ? namespace : 'haptic';

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
}

function summary(values: readonly number[]): string {
  return `p50 ${quantile(values, 0.5).toFixed(0)} ms, p90 ${quantile(values, 0.9).toFixed(0)} ms, max ${quantile(values, 1).toFixed(0)} ms`;
}

/** GET / with a Host header through one address on :8080 (or `port`); '' on any error. */
function get(
  address: string,
  host: string,
  port = 8080,
  path = '/',
  agent: Agent | false = false,
): Promise<string> {
  return new Promise((resolve) => {
    const call = request(
      { host: address, port, path, headers: { host }, agent, timeout: 1000 },
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
    call.on('timeout', () => call.destroy());
    call.end();
  });
}

/** One endpoint change as the bench saw it: wall-clock start, API write time, served. */
interface ChangeWindow {
  readonly startedAt: number;
  readonly writeMs: number;
  readonly servedAt: number;
}

interface LogLine {
  readonly at: number;
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

function parseLogLines(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const fields = JSON.parse(line) as Record<string, unknown>;
      const at = Date.parse(String(fields.time));
      if (Number.isFinite(at)) lines.push({ at, msg: String(fields.msg), fields });
    } catch {
      // Not a log record.
    }
  }
  return lines;
}

function numberField(line: LogLine, name: string): number {
  const value = line.fields[name];
  return typeof value === 'number' ? value : 0;
}

/**
 * Where each change's time goes, from the Pods' logs (ISO times in ms; one node, one clock):
 * the API write; write start → the controller's slot update starting (watch event, debounce,
 * snapshot); the slot update; its end → the last agent's runtime apply done (delivery: encode,
 * send, agent apply); the agent apply itself and its phases (plan; the runtime commands and the
 * file writes, concurrent; record); the last agent's log line → both replicas seen serving
 * (negative: seen serving before the agent had written its files and state). p50 of each over the changes whose log lines were all found.
 */
function stageTimes(
  windows: readonly ChangeWindow[],
  logs: {
    readonly controller: readonly LogLine[];
    readonly agents: readonly (readonly LogLine[])[];
  },
): Record<string, number> {
  const updates = logs.controller.filter(
    (line) => line.msg === 'updated server slots without rendering',
  );
  const delivered = logs.controller.filter((line) => line.msg === 'delivered to the agents');
  const applied = logs.agents.map((lines) =>
    lines.filter((line) => line.msg === 'configuration applied through the runtime API'),
  );
  const stages: Record<string, number[]> = {
    apiWrite: [],
    toSlotUpdate: [],
    slotUpdate: [],
    toAgentsApplied: [],
    agentApply: [],
    toDelivered: [],
    lastAgentLogToServed: [],
    agentPlan: [],
    agentWrite: [],
    agentRuntime: [],
    agentRecord: [],
  };
  // A change's lines fall between its start and the next change's (an agent may log after
  // the bench saw both replicas serve: it answers once its files and state are written).
  let end = Infinity;
  const within = (line: LogLine, window: ChangeWindow): boolean =>
    line.at >= window.startedAt - 1 && line.at < end;
  let found = 0;
  for (const [index, window] of windows.entries()) {
    end = windows[index + 1]?.startedAt ?? window.servedAt + 1_000;
    const update = updates.find((line) => within(line, window));
    const agentLines = applied.map((lines) => lines.find((line) => within(line, window)));
    const done = delivered.find((line) => line.at >= (update?.at ?? Infinity));
    if (update === undefined || agentLines.some((line) => line === undefined)) continue;
    found += 1;
    const lastAgent = Math.max(...agentLines.map((line) => line?.at ?? 0));
    const updateMs = numberField(update, 'updateMs');
    stages.apiWrite?.push(window.writeMs);
    stages.toSlotUpdate?.push(update.at - updateMs - window.startedAt);
    stages.slotUpdate?.push(updateMs);
    stages.toAgentsApplied?.push(lastAgent - update.at);
    for (const line of agentLines) {
      if (line === undefined) continue;
      stages.agentApply?.push(numberField(line, 'durationMs'));
      const phases = line.fields.phasesMs;
      if (typeof phases !== 'object' || phases === null) continue;
      const phase = (name: string): number => {
        const value: unknown = (phases as Record<string, unknown>)[name];
        return typeof value === 'number' ? value : 0;
      };
      stages.agentPlan?.push(phase('plan'));
      stages.agentWrite?.push(phase('write'));
      stages.agentRuntime?.push(phase('runtime'));
      stages.agentRecord?.push(phase('record'));
    }
    if (done !== undefined) stages.toDelivered?.push(done.at - update.at);
    stages.lastAgentLogToServed?.push(window.servedAt - lastAgent);
  }
  return {
    changesMatched: found,
    ...Object.fromEntries(
      Object.entries(stages).map(([name, values]) => [
        name,
        Math.round(quantile(values, 0.5) * 10) / 10,
      ]),
    ),
  };
}

try {
  const env = { KUBECONFIG: kubeconfigPath };
  const kubectl = (args: readonly string[], input?: string) =>
    execa(toolPath('kubectl'), args, { env, ...(input === undefined ? {} : { input }) });
  const podIps = async (selector: string): Promise<string[]> =>
    (
      await kubectl([
        ...[
          'get',
          'pods',
          '-n',
          namespace,
          '-l',
          selector,
          '--field-selector=status.phase=Running',
        ],
        ...['-o', 'jsonpath={.items[*].status.podIP}'],
      ])
    ).stdout
      .split(' ')
      .filter((ip) => ip !== '');
  if (cluster === undefined) await kubectl(['create', 'namespace', namespace]);
  await execa(
    toolPath('helm'),
    [
      ...['install', 'haptic', join(projectRoot, 'chart'), '-n', namespace, '--create-namespace'],
      ...['--set', 'controller.replicas=1', '--set', `ingressClass.name=${ingressClass}`],
    ],
    { env },
  );
  const samples = ['blue', 'green'].flatMap((name) => sampleBackendObjects(name, namespace, image));
  await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: samples }),
  );
  for (const deployment of ['haptic-controller', 'haptic-haproxy', 'blue', 'green']) {
    await kubectl([
      ...['rollout', 'status', `deployment/${deployment}`, '-n', namespace, '--timeout=3m'],
    ]);
  }
  const addresses = await podIps('app.kubernetes.io/component=loadbalancer');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const networking = kc.makeApiClient(NetworkingV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const rule = (host: string, service: string): V1IngressRule => ({
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
  });
  const ingress = (name: string, rules: V1IngressRule[]): Pick<V1Ingress, 'metadata' | 'spec'> => ({
    metadata: { name, namespace },
    spec: { ingressClassName: ingressClass, rules },
  });
  // The polls reuse a connection per replica (HAProxy routes each request anew), so a poll
  // round costs a request, not a connection: the poll's granularity stays a few ms under load.
  const pollAgents = new Map(
    addresses.map((address) => [address, new Agent({ keepAlive: true, maxSockets: 1 })]),
  );
  /** Until both replicas answer `<backend> /` for `host`. */
  const served = async (host: string, backend: string): Promise<boolean> =>
    (
      await Promise.all(
        addresses.map((address) => get(address, host, 8080, '/', pollAgents.get(address) ?? false)),
      )
    ).every((answer) => answer === `${backend} /`);
  const until = async (host: string, backend: string, pollMs: number): Promise<void> => {
    while (!(await served(host, backend))) await sleep(pollMs);
  };

  // 1. Ingress changes.
  await networking.createNamespacedIngress({
    namespace,
    body: ingress('web', [rule('web.example.com', 'blue')]),
  });
  await until('web.example.com', 'blue', 20);
  const ingressTimes: number[] = [];
  for (let i = 0; i < changes; i += 1) {
    const name = i % 2 === 0 ? 'green' : 'blue';
    await sleep(300);
    const current = await networking.readNamespacedIngress({ name: 'web', namespace });
    const started = performance.now();
    await networking.replaceNamespacedIngress({
      name: 'web',
      namespace,
      body: {
        ...ingress('web', [rule('web.example.com', name)]),
        metadata: {
          name: 'web',
          namespace,
          resourceVersion: current.metadata?.resourceVersion ?? '',
        },
      },
    });
    await until('web.example.com', name, 5);
    ingressTimes.push(performance.now() - started);
  }
  process.stdout.write(
    `Ingress change → both replicas serving (${changes} changes): ${summary(ingressTimes)}\n`,
  );

  // 2. Endpoint changes at `backends` backends.
  const [blueIp] = await podIps('app=blue');
  const [greenIp] = await podIps('app=green');
  if (blueIp === undefined || greenIp === undefined) throw new Error('the sample Pods have no IP');
  const ip = { blue: blueIp, green: greenIp } as const;
  const slice = (i: number, backend: 'blue' | 'green'): V1EndpointSlice => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `svc-${i}`, namespace, labels: { 'kubernetes.io/service-name': `svc-${i}` } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: [{ addresses: [ip[backend]], conditions: { ready: true } }],
  });
  const host = (i: number): string => `svc-${i}.bench.example`;
  const objects: unknown[] = [];
  for (let i = 0; i < backends; i += 1) {
    objects.push(
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `svc-${i}`, namespace },
        spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      },
      slice(i, 'blue'),
    );
  }
  for (let first = 0; first < backends; first += rulesPerIngress) {
    const rules: V1IngressRule[] = [];
    for (let i = first; i < Math.min(backends, first + rulesPerIngress); i += 1) {
      rules.push(rule(host(i), `svc-${i}`));
    }
    objects.push({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      ...ingress(`bench-${first}`, rules),
    });
  }
  const created = performance.now();
  await kubectl(
    ['apply', '--server-side', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
  await until(host(0), 'blue', 50);
  await until(host(backends - 1), 'blue', 50);
  process.stdout.write(
    `${backends} backends created and served in ${((performance.now() - created) / 1000).toFixed(1)} s\n`,
  );

  const [controllerIp] = await podIps('app.kubernetes.io/component=controller');
  if (controllerIp === undefined) throw new Error('the controller Pod has no IP');
  const metric = async (address: string, name: string): Promise<number> =>
    (await get(address, 'metrics', 9090, '/metrics'))
      .split('\n')
      .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  /** JSON log lines of one Pod (a name) or of the Pods of a selector, since `since`. */
  const podLogs = async (pod: string, container: string, since: Date): Promise<LogLine[]> =>
    parseLogLines(
      (
        await kubectl([
          ...['logs', '-n', namespace, '-c', container, `--since-time=${since.toISOString()}`],
          ...(pod.includes('=') ? ['-l', pod, '--tail=-1'] : [pod]),
        ])
      ).stdout,
    );
  const haproxyPods = (
    await kubectl([
      ...['get', 'pods', '-n', namespace, '-l', 'app.kubernetes.io/component=loadbalancer'],
      ...['-o', 'jsonpath={.items[*].metadata.name}'],
    ])
  ).stdout.split(' ');
  interface AgentView {
    readonly generation: number;
    readonly processes: number;
    readonly reloads: number;
  }
  const agentViews = async (): Promise<AgentView[]> =>
    Promise.all(
      haproxyPods.map(async (pod) => {
        const state = JSON.parse(
          (
            await kubectl([
              'exec',
              '-n',
              namespace,
              pod,
              '-c',
              'agent',
              '--',
              '/usr/local/bin/haptic',
              'agent',
              'state',
            ])
          ).stdout,
        ) as {
          generation: number;
          haproxy: { master?: { reloads: number }; workers?: unknown[]; oldWorkers?: unknown[] };
        };
        return {
          generation: state.generation,
          processes:
            1 + (state.haproxy.workers?.length ?? 0) + (state.haproxy.oldWorkers?.length ?? 0),
          reloads: state.haproxy.master?.reloads ?? -1,
        };
      }),
    );
  // Old workers of the setup's reloads finish their connections first.
  let before = await agentViews();
  for (let wait = 0; before.some((view) => view.processes > 2) && wait < 60; wait += 1) {
    await sleep(1000);
    before = await agentViews();
  }
  const reloadsBefore = await metric(controllerIp, 'haptic_reloads_total');
  const runtimeBefore = await metric(controllerIp, 'haptic_runtime_updates_total');
  const current = new Map<number, 'blue' | 'green'>();
  const endpointTimes: number[] = [];
  const windows: ChangeWindow[] = [];
  const runStarted = new Date();
  for (let n = 0; n < endpointChanges; n += 1) {
    const i = (n * 7919) % backends;
    const next = current.get(i) === 'green' ? 'blue' : 'green';
    current.set(i, next);
    await sleep(250);
    const startedAt = Date.now();
    const started = performance.now();
    await discovery.replaceNamespacedEndpointSlice({
      name: `svc-${i}`,
      namespace,
      body: slice(i, next),
    });
    const written = performance.now();
    await until(host(i), next, 2);
    const took = performance.now() - started;
    endpointTimes.push(took);
    windows.push({ startedAt, writeMs: written - started, servedAt: startedAt + took });
  }
  for (const agent of pollAgents.values()) agent.destroy();
  const stages = stageTimes(windows, {
    controller: await podLogs('app.kubernetes.io/component=controller', 'controller', runStarted),
    agents: await Promise.all(haproxyPods.map(async (pod) => podLogs(pod, 'agent', runStarted))),
  });
  process.stdout.write(
    `Endpoint change stages (ms, p50 over the changes): ${JSON.stringify(stages)}\n`,
  );
  const reloads = (await metric(controllerIp, 'haptic_reloads_total')) - reloadsBefore;
  const runtimeUpdates =
    (await metric(controllerIp, 'haptic_runtime_updates_total')) - runtimeBefore;
  const after = await agentViews();
  process.stdout.write(
    `Endpoint change → both replicas serving at ${backends} backends (${endpointChanges} changes): ${summary(endpointTimes)}; ` +
      `${reloads} reloads, ${runtimeUpdates} runtime updates; HAProxy processes per Pod ${before.map((v) => v.processes).join('/')} before, ${after.map((v) => v.processes).join('/')} after; ` +
      `master reload counts ${before.map((v) => v.reloads).join('/')} before, ${after.map((v) => v.reloads).join('/')} after\n`,
  );

  // 3. A fresh render equals the files on the agents.
  await kubectl(['rollout', 'restart', 'deployment/haptic-controller', '-n', namespace]);
  await kubectl([
    'rollout',
    'status',
    'deployment/haptic-controller',
    '-n',
    namespace,
    '--timeout=3m',
  ]);
  // The new Pod, not the one still terminating (both are Running for a while).
  const freshIp = (await podIps('app.kubernetes.io/component=controller')).find(
    (address) => address !== controllerIp,
  );
  let fresh = 0;
  for (let wait = 0; fresh === 0 && wait < 240; wait += 1) {
    await sleep(500);
    fresh = await metric(freshIp ?? '', 'haptic_config_last_success_timestamp_seconds');
  }
  const afterRestart = await agentViews();
  const freshRenderEqual =
    fresh > 0 && afterRestart.every((view, i) => view.generation === after[i]?.generation);
  process.stdout.write(
    `Fresh controller after the run: ${fresh > 0 ? 'found its configuration on every agent' : 'did not confirm its configuration'}; ` +
      `agent generations ${after.map((v) => v.generation).join('/')} → ${afterRestart.map((v) => v.generation).join('/')} (${freshRenderEqual ? 'files equal a fresh render' : 'files DIFFER from a fresh render'})\n`,
  );
  process.stdout.write(
    `${JSON.stringify({
      endpointP50Ms: Math.round(quantile(endpointTimes, 0.5)),
      endpointP90Ms: Math.round(quantile(endpointTimes, 0.9)),
      ingressP50Ms: Math.round(quantile(ingressTimes, 0.5)),
      reloads,
      runtimeUpdates,
      backends,
      endpointChanges,
      extraProcesses: after.reduce(
        (sum, view, i) => sum + view.processes - (before[i]?.processes ?? 0),
        0,
      ),
      freshRenderEqual,
    })}\n`,
  );
} finally {
  if (cluster === undefined) {
    const env = { KUBECONFIG: kubeconfigPath };
    await execa(toolPath('helm'), ['uninstall', 'haptic', '-n', namespace], { env, reject: false });
    await execa(toolPath('kubectl'), ['delete', 'namespace', namespace, '--wait=false'], {
      env,
      reject: false,
    });
  } else {
    await cluster.stop();
  }
  rmSync(dir, { recursive: true, force: true });
}
