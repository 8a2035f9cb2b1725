/**
 * `haptic run` assembled: informers → reconciler (render, lint, check) → delivery to every
 * agent on the leader; leader election on a Lease; the admission webhook (the release's
 * Secrets plus Ingresses and HAProxyTemplateConfigs) on every replica; health and metrics.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { IdentityOverrides } from '../webhook/index.ts';
import type { ListenAddress } from '../net/listen-address.ts';
import { RequestCounter } from '../kube/request-counter.ts';
import { TlsMaterialWatcher } from '../tls/material-watcher.ts';
import { AgentClient } from './delivery/agent-client.ts';
import { AgentDelivery } from './delivery/agent-delivery.ts';
import { type AgentDiscovery, podDiscovery } from './delivery/agent-discovery.ts';
import { ClusterWatch } from './watch/cluster-watch.ts';
import { ConfigPipeline } from './pipeline/config-pipeline.ts';
import { ControllerMetrics } from './status/controller-metrics.ts';
import type { EndpointRanges } from './routing/endpoint-rules.ts';
import { startControllerWebhook } from './admission/controller-webhook.ts';
import { IngressStatusPublisher, type StatusAddressSource } from './status/ingress-status-publisher.ts';
import { LeaderElection } from './leader-election.ts';
import type { ModelBudgets } from './routing/model-budgets.ts';
import { startOpsServers } from './ops-server.ts';
import { Reconciler } from './pipeline/reconciler.ts';
import { StatusReporter } from '../api/status-reporter.ts';
import { loadedTlsReport } from '../tls/loaded-report.ts';
import { TlsSeries } from './status/tls-series.ts';
import { TlsStateBook } from './status/tls-state-book.ts';
import { TlsStatePublisher } from '../api/tls-state-publisher.ts';
import { pruneTlsState } from './status/tls-state-pruning.ts';
import { makeApiClient } from '../kube/api-client.ts';
import { apiStatus } from '../kube/api-errors.ts';
import { describeError } from '../errors.ts';

/** How often the leader removes the TLS state entries of Pods that are gone. */
const tlsPruneIntervalMs = 60_000;

export interface ControllerOptions {
  readonly kubeConfig: KubeConfig;
  readonly userAgent: string;
  /** Namespace of the release: Lease, HAProxyTemplateConfig, agent Pods. */
  readonly namespace: string;
  readonly release: string;
  readonly ingressClass: string;
  readonly templateConfig: string;
  /** The haptic-haproxy Pods: their label selector and the agents' port. */
  readonly agents: { readonly selector: string; readonly port: number };
  /**
   * Label selector of the release's own Pods in `namespace` (HAProxy and the controller),
   * whose addresses no backend may use (`--own-pod-selector`).
   * @default agents.selector (the HAProxy Pods)
   */
  readonly ownPodSelector?: string;
  /**
   * The ranges endpoints may use (`--pod-cidrs`, `--allowed-endpoint-cidrs`).
   * @default {} (the Nodes' Pod CIDRs only)
   */
  readonly endpointRanges?: EndpointRanges;
  readonly transport:
    | { readonly mode: 'mtls'; readonly tlsDir: string; readonly serverName: string }
    | { readonly mode: 'legacy-basic-auth'; readonly username: string; readonly password: string };
  /** `namespace/name` of the default certificate. */
  readonly defaultCertificate?: string;
  /** What a namespace, and all together, may use (`--server-slots`…). @default defaultModelBudgets */
  readonly budgets?: ModelBudgets;
  readonly leaseName: string;
  readonly identity: string;
  readonly webhook?: {
    readonly certDir: string;
    /** ca.crt of the CAs callers' client certificates must chain to; absent: none asked for. */
    readonly clientCaDir?: string;
    readonly listen: ListenAddress;
    /** Identity Secrets and peer names the chart passes, over the chart defaults. */
    readonly identityOverrides?: IdentityOverrides;
  };
  readonly health: ListenAddress;
  readonly metrics: ListenAddress;
  /** How often every agent's state is compared with the desired configuration. @default 10 s */
  readonly syncIntervalMs?: number;
  readonly leaseDurationMs?: number;
  readonly tlsPollIntervalMs?: number;
  /** Unix socket of the check sandbox (`--check-socket`): every `haproxy -c` runs there. */
  readonly checkSocket: string;
  /**
   * Serve endpoints of FQDN EndpointSlices (`--fqdn-endpoints`); false leaves every one out
   * with an Event.
   * @default true
   */
  readonly fqdnEndpoints?: boolean;
  /**
   * The address served Ingresses carry in their status (`--publish-service`,
   * `--publish-status-address`); none: Ingress status is left alone.
   */
  readonly publishStatus?: StatusAddressSource;
}

export interface RunningController {
  readonly metrics: ControllerMetrics;
  readonly healthPort: number;
  readonly metricsPort: number;
  readonly webhookPort: number | undefined;
  close(): Promise<void>;
}

export async function startController(
  options: ControllerOptions,
  logger: Logger,
): Promise<RunningController> {
  const counter = new RequestCounter();
  const kube = { kubeConfig: options.kubeConfig, counter, userAgent: options.userAgent };
  const metrics = new ControllerMetrics();
  const closers: (() => Promise<void> | void)[] = [];
  const close = async (): Promise<void> => {
    for (const closer of closers.reverse()) await closer();
  };
  try {
    // The informers' and discovery's callbacks reach these once they exist.
    const late: { reconciler?: Reconciler; delivery?: AgentDelivery } = {};
    const watch = new ClusterWatch({
      ...kube,
      namespace: options.namespace,
      templateConfigName: options.templateConfig,
      ingressClass: options.ingressClass,
      fqdnEndpoints: options.fqdnEndpoints ?? true,
      ownPods: {
        namespace: options.namespace,
        labelSelector: options.ownPodSelector ?? options.agents.selector,
      },
      endpointRanges: options.endpointRanges ?? {},
      onChange: (kind) => {
        late.reconciler?.trigger(kind);
      },
      logger,
    });
    const discovery: AgentDiscovery = podDiscovery({
      ...kube,
      namespace: options.namespace,
      labelSelector: options.agents.selector,
      agentPort: options.agents.port,
      onChange: () => {
        void late.delivery?.sync();
      },
      logger,
    });
    const ops = await startOpsServers({
      health: options.health,
      metrics: options.metrics,
      registry: metrics.registry,
      notReady: () => (watch.synced ? undefined : 'the informers have not synced yet'),
    });
    closers.push(() => ops.close());

    let material: TlsMaterialWatcher | undefined;
    if (options.transport.mode === 'mtls') {
      material = await TlsMaterialWatcher.start({
        dir: options.transport.tlsDir,
        logger,
        ...(options.tlsPollIntervalMs === undefined
          ? {}
          : { pollIntervalMs: options.tlsPollIntervalMs }),
      });
      const watcher = material;
      closers.push(() => {
        watcher.close();
      });
    }
    const tlsStates =
      material === undefined ? undefined : recordTlsState(options, kube, metrics, material, logger);
    if (tlsStates !== undefined) closers.push(tlsStates.close);
    const client = new AgentClient(
      options.transport.mode === 'mtls' && material !== undefined
        ? { mode: 'mtls', material, serverName: options.transport.serverName }
        : options.transport.mode === 'legacy-basic-auth'
          ? options.transport
          : { mode: 'legacy-basic-auth', username: '', password: '' },
    );
    closers.push(() => {
      client.close();
    });
    const pipelineOptions = {
      ingressClass: options.ingressClass,
      ...(options.defaultCertificate === undefined
        ? {}
        : { defaultCertificate: options.defaultCertificate }),
      ...(options.budgets === undefined ? {} : { budgets: options.budgets }),
      check: { socket: options.checkSocket },
    };
    const pipeline = new ConfigPipeline({ ...pipelineOptions, metrics });
    closers.push(() => pipeline.close());
    const delivery = new AgentDelivery({
      client,
      discovery,
      metrics,
      logger,
      ...(tlsStates === undefined ? {} : { observer: tlsStates.book }),
      onAgentFree: () => {
        late.reconciler?.trigger();
      },
    });
    late.delivery = delivery;
    const reporter = new StatusReporter({ ...kube, instance: options.identity, logger });
    const publisher =
      options.publishStatus === undefined
        ? undefined
        : new IngressStatusPublisher({
            ...kube,
            source: options.publishStatus,
            fieldManager: options.identity,
            logger,
          });
    const election = new LeaderElection({
      ...kube,
      namespace: options.namespace,
      leaseName: options.leaseName,
      identity: options.identity,
      ...(options.leaseDurationMs === undefined
        ? {}
        : {
            leaseDurationMs: options.leaseDurationMs,
            renewDeadlineMs: Math.round((options.leaseDurationMs * 2) / 3),
          }),
      onStartedLeading: () => {
        metrics.leader.set(1);
        void delivery.sync().then(() => {
          late.reconciler?.trigger();
        });
      },
      onStoppedLeading: () => {
        metrics.leader.set(0);
        delivery.forget();
        publisher?.forget();
        tlsStates?.book.forgetAgents();
      },
      logger,
    });
    const reconciler = new Reconciler({
      watch,
      pipeline,
      delivery,
      reporter,
      ...(publisher === undefined ? {} : { publisher }),
      metrics,
      logger,
      isLeader: () => election.leading,
    });
    late.reconciler = reconciler;
    closers.push(() => {
      reconciler.stop();
    });

    await watch.start();
    closers.push(() => watch.stop());
    await discovery.start();
    closers.push(() => discovery.stop());
    logger.info('informers synced');

    let webhookPort: number | undefined;
    if (options.webhook !== undefined) {
      const reviews = new ConfigPipeline(pipelineOptions);
      closers.push(() => reviews.close());
      const webhook = await startControllerWebhook({
        ...options.webhook,
        release: options.release,
        namespace: options.namespace,
        kubeConfig: options.kubeConfig,
        userAgent: options.userAgent,
        watch,
        pipeline: reviews,
        ingressClass: options.ingressClass,
        templateConfig: options.templateConfig,
        metrics,
        logger,
      });
      webhookPort = webhook.port;
      closers.push(() => webhook.close());
    }

    election.start();
    closers.push(() => election.stop());
    await reconciler.run();
    const interval = setInterval(() => {
      if (election.leading) void delivery.sync();
    }, options.syncIntervalMs ?? 10_000);
    if (tlsStates !== undefined) {
      const core = makeApiClient(options.kubeConfig, CoreV1Api, {
        counter,
        userAgent: options.userAgent,
      });
      const podExists = async (name: string): Promise<boolean> => {
        try {
          await core.readNamespacedPod({ name, namespace: options.namespace });
          return true;
        } catch (error) {
          if (apiStatus(error) === 404) return false;
          throw error;
        }
      };
      const pruning = setInterval(() => {
        if (!election.leading) return;
        const known = new Set([
          options.identity,
          ...discovery.endpoints().map((endpoint) => endpoint.name),
        ]);
        pruneTlsState({
          config: watch.templateConfig(),
          known,
          podExists,
          sink: tlsStates.publisher,
        }).catch((error: unknown) => {
          logger.warn({ err: describeError(error) }, 'could not prune the TLS state of gone Pods');
        });
      }, tlsPruneIntervalMs);
      closers.push(() => {
        clearInterval(pruning);
      });
    }
    closers.push(() => {
      clearInterval(interval);
    });

    return {
      metrics,
      healthPort: ops.healthPort,
      metricsPort: ops.metricsPort,
      webhookPort,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Records this replica's loaded material in the HAProxyTemplateConfig status and the metrics
 * (on each change, and every 10 s so a passed previous-CA deadline shows), and gives delivery
 * the book the agents' reports go into. `close` removes the replica's own entry.
 */
function recordTlsState(
  options: ControllerOptions,
  kube: {
    readonly kubeConfig: KubeConfig;
    readonly counter: RequestCounter;
    readonly userAgent: string;
  },
  metrics: ControllerMetrics,
  material: TlsMaterialWatcher,
  logger: Logger,
): {
  readonly book: TlsStateBook;
  readonly publisher: TlsStatePublisher;
  close: () => Promise<void>;
} {
  const publisher = new TlsStatePublisher({
    ...kube,
    namespace: options.namespace,
    templateConfig: options.templateConfig,
    logger,
  });
  const book = new TlsStateBook({
    pod: options.identity,
    series: new TlsSeries(metrics),
    sink: publisher,
  });
  const recordOwn = (): void => {
    book.own(loadedTlsReport(material.current(), new Date()));
  };
  recordOwn();
  const unsubscribe = material.onChange(recordOwn);
  const timer = setInterval(() => {
    recordOwn();
    void publisher.flush();
  }, options.syncIntervalMs ?? 10_000);
  timer.unref();
  return {
    book,
    publisher,
    close: async () => {
      clearInterval(timer);
      unsubscribe();
      book.removeOwn();
      await publisher.flush();
    },
  };
}
