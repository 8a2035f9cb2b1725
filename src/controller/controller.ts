/**
 * `haptic run` assembled: informers → reconciler (render, lint, check) → delivery to every
 * agent on the leader; leader election on a Lease; the admission webhook (the release's
 * Secrets plus Ingresses and HAProxyTemplateConfigs) on every replica; health and metrics.
 *
 * The parts start in this order and stop in reverse (src/lifecycle): the TLS material and
 * this replica's TLS state (mTLS only), the agent client, the pipeline, the control loop (not
 * ready until its informers have synced), health and metrics, the informers, agent
 * discovery, the webhook, leader election, the first reconcile, then the periodic agent sync
 * and the TLS state pruning. `/readyz` asks the lifecycle.
 */
import type { Logger } from 'pino';
import { type KubeClients, makeKubeClients } from '../kube/kube-clients.ts';
import { RequestCounter } from '../kube/request-counter.ts';
import { Lifecycle } from '../lifecycle/lifecycle.ts';
import { openTlsMaterial } from '../tls/material-watcher.ts';
import { startControllerWebhook } from './admission/controller-webhook.ts';
import { AgentClient, type AgentTransportConfig } from './delivery/agent-client.ts';
import { ConfigPipeline } from './pipeline/config-pipeline.ts';
import { readHaproxyVersion } from '../sandbox/haproxy-binary.ts';
import { readPackageVersion } from '../version.ts';
import { ControllerMetrics } from './status/controller-metrics.ts';
import { type ControlLoop, wireControlLoop } from './control-loop.ts';
import type { ControllerOptions } from './controller-options.ts';
import {
  type RecordedTlsState,
  type TlsStateOptions,
  pruneGonePods,
  recordTlsState,
} from './controller-tls-state.ts';
import { startOpsServers } from './ops-server.ts';

export interface RunningController {
  readonly metrics: ControllerMetrics;
  readonly healthPort: number;
  readonly metricsPort: number;
  readonly webhookPort: number | undefined;
  close(): Promise<void>;
}

/** What every part is made with. */
interface Shared {
  readonly options: ControllerOptions;
  readonly clients: KubeClients;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
}

export async function startController(
  options: ControllerOptions,
  logger: Logger,
): Promise<RunningController> {
  const clients = makeKubeClients(options.kubeConfig, {
    counter: new RequestCounter(),
    userAgent: options.userAgent,
  });
  const shared: Shared = { options, clients, metrics: new ControllerMetrics(), logger };
  const { metrics } = shared;
  // haproxy -v runs beside the start, not before it: the metric needs no waiting.
  void readHaproxyVersion().then((haproxyVersion) => {
    metrics.setBuildInfo({ version: readPackageVersion(), haproxyVersion });
  });
  const lifecycle = new Lifecycle();
  const tls = await startTls(lifecycle, shared);
  const client = await lifecycle.open('agent client', () => new AgentClient(tls.transport), {
    close: (opened) => {
      opened.close();
    },
  });
  const pipeline = await lifecycle.open(
    'config pipeline',
    () => new ConfigPipeline({ ...pipelineOptions(options), metrics }),
    { close: (opened) => opened.close() },
  );
  const loop = await lifecycle.open(
    'control loop',
    () => wireControlLoop({ ...shared, client, pipeline, tlsState: tls.state }),
    {
      close: (opened) => {
        opened.reconciler.stop();
      },
      notReady: (opened) => (opened.watch.synced ? undefined : 'the informers have not synced yet'),
    },
  );
  const ops = await lifecycle.open(
    'ops servers',
    () =>
      startOpsServers({
        health: options.health,
        metrics: options.metrics,
        registry: metrics.registry,
        notReady: () => lifecycle.notReady(),
      }),
    { close: (opened) => opened.close() },
  );
  const webhookPort = await startLoop(lifecycle, shared, loop, tls.state);
  return {
    metrics,
    healthPort: ops.healthPort,
    metricsPort: ops.metricsPort,
    webhookPort,
    close: () => lifecycle.stop(),
  };
}

/** The controller identity and this replica's TLS state (mTLS), and how to reach the agents. */
async function startTls(
  lifecycle: Lifecycle,
  shared: Shared,
): Promise<{ readonly transport: AgentTransportConfig; readonly state?: RecordedTlsState }> {
  const { options, logger } = shared;
  const { transport } = options;
  if (transport.mode === 'legacy-basic-auth') return { transport };
  const material = await openTlsMaterial(lifecycle, {
    dir: transport.tlsDir,
    logger,
    ...(options.tlsPollIntervalMs === undefined
      ? {}
      : { pollIntervalMs: options.tlsPollIntervalMs }),
  });
  const state = await lifecycle.open(
    'TLS state',
    () => recordTlsState(tlsStateOptions(shared), material),
    {
      close: (opened) => opened.close(),
    },
  );
  return { transport: { mode: 'mtls', material, serverName: transport.serverName }, state };
}

/**
 * Starts the loop once health and metrics serve: informers, agent discovery, the webhook,
 * leader election, the first reconcile, the periodic work. Resolves to the webhook's port.
 */
async function startLoop(
  lifecycle: Lifecycle,
  shared: Shared,
  loop: ControlLoop,
  tlsState: RecordedTlsState | undefined,
): Promise<number | undefined> {
  const { options, logger } = shared;
  const { watch, discovery, election, reconciler, delivery } = loop;
  await lifecycle.start({
    name: 'informers',
    start: () => watch.start(),
    stop: () => watch.stop(),
  });
  await lifecycle.start({
    name: 'agent discovery',
    start: () => discovery.start(),
    stop: () => discovery.stop(),
  });
  logger.info('informers synced');
  const webhookPort = await startWebhook(lifecycle, shared, watch);
  await lifecycle.start({
    name: 'leader election',
    start: () => {
      election.start();
    },
    stop: () => election.stop(),
  });
  await lifecycle.start({ name: 'first reconcile', start: () => reconciler.run() });
  const clear = {
    close: (timer: NodeJS.Timeout) => {
      clearInterval(timer);
    },
  };
  await lifecycle.open(
    'agent sync',
    () =>
      setInterval(() => {
        if (election.leading) void delivery.sync();
      }, options.syncIntervalMs ?? 10_000),
    clear,
  );
  if (tlsState !== undefined) {
    const isLeader = (): boolean => election.leading;
    await lifecycle.open(
      'TLS state pruning',
      () => pruneGonePods(tlsStateOptions(shared), tlsState, { isLeader, watch, discovery }),
      clear,
    );
  }
  return webhookPort;
}

/** How this replica keeps the TLS state in the status. */
function tlsStateOptions({ options, clients, metrics, logger }: Shared): TlsStateOptions {
  return {
    clients,
    namespace: options.namespace,
    templateConfig: options.templateConfig,
    identity: options.identity,
    ...(options.syncIntervalMs === undefined ? {} : { syncIntervalMs: options.syncIntervalMs }),
    metrics,
    logger,
  };
}

/** The admission webhook with its own review pipeline, when `--webhook-cert-dir` asks for it. */
async function startWebhook(
  lifecycle: Lifecycle,
  { options, clients, metrics, logger }: Shared,
  watch: ControlLoop['watch'],
): Promise<number | undefined> {
  if (options.webhook === undefined) return undefined;
  const webhookOptions = options.webhook;
  const reviews = await lifecycle.open(
    'review pipeline',
    () => new ConfigPipeline(pipelineOptions(options)),
    { close: (opened) => opened.close() },
  );
  const webhook = await lifecycle.open(
    'webhook',
    () =>
      startControllerWebhook({
        ...webhookOptions,
        release: options.release,
        namespace: options.namespace,
        kubeConfig: clients.kubeConfig,
        userAgent: clients.userAgent,
        watch,
        pipeline: reviews,
        ingressClass: options.ingressClass,
        templateConfig: options.templateConfig,
        metrics,
        logger,
      }),
    { close: (opened) => opened.close() },
  );
  return webhook.port;
}

/** The pipeline settings delivery and reviews share. */
function pipelineOptions(options: ControllerOptions) {
  return {
    ingressClass: options.ingressClass,
    ...(options.defaultCertificate === undefined
      ? {}
      : { defaultCertificate: options.defaultCertificate }),
    ...(options.budgets === undefined ? {} : { budgets: options.budgets }),
    check: { socket: options.checkSocket },
  };
}
