/**
 * The controller's loop, wired: the informers trigger the reconciler, which reads them,
 * renders, checks and hands the configuration to delivery; discovery tells delivery where the
 * agents are, and an agent that frees up asks the reconciler again; leader election decides
 * whether this replica delivers. The parts call each other, so they are made here together;
 * making them starts nothing (no callback runs before the controller starts the informers).
 */
import type { Logger } from 'pino';
import type { KubeClients } from '../kube/kube-clients.ts';
import { StatusReporter } from '../api/status-reporter.ts';
import type { AgentClient } from './delivery/agent-client.ts';
import { AgentDelivery } from './delivery/agent-delivery.ts';
import { type AgentDiscovery, podDiscovery } from './delivery/agent-discovery.ts';
import type { ConfigPipeline } from './pipeline/config-pipeline.ts';
import { Reconciler } from './pipeline/reconciler.ts';
import type { ControllerMetrics } from './status/controller-metrics.ts';
import { IngressStatusPublisher } from './status/ingress-status-publisher.ts';
import { ClusterWatch } from './watch/cluster-watch.ts';
import type { ControllerOptions } from './controller-options.ts';
import type { RecordedTlsState } from './controller-tls-state.ts';
import { LeaderElection } from './leader-election.ts';

export interface ControlLoop {
  readonly watch: ClusterWatch;
  readonly discovery: AgentDiscovery;
  readonly delivery: AgentDelivery;
  readonly election: LeaderElection;
  readonly reconciler: Reconciler;
}

export interface ControlLoopParts {
  readonly options: ControllerOptions;
  readonly clients: KubeClients;
  readonly client: AgentClient;
  readonly pipeline: ConfigPipeline;
  /** Present with mTLS: where the agents' TLS reports go. */
  readonly tlsState: RecordedTlsState | undefined;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
}

export function wireControlLoop(parts: ControlLoopParts): ControlLoop {
  const { options, clients, metrics, logger, tlsState } = parts;
  const watch = new ClusterWatch({
    clients,
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
      reconciler.trigger(kind);
    },
    logger,
  });
  const discovery = podDiscovery({
    clients,
    namespace: options.namespace,
    labelSelector: options.agents.selector,
    agentPort: options.agents.port,
    onChange: () => {
      void delivery.sync();
    },
    logger,
  });
  const delivery = new AgentDelivery({
    client: parts.client,
    discovery,
    metrics,
    logger,
    ...(tlsState === undefined ? {} : { observer: tlsState.book }),
    onAgentFree: () => {
      reconciler.trigger();
    },
  });
  const publisher =
    options.publishStatus === undefined
      ? undefined
      : new IngressStatusPublisher({
          clients,
          source: options.publishStatus,
          fieldManager: options.identity,
          logger,
        });
  const election = electLeader(parts, {
    started: () => {
      void delivery.sync().then(() => {
        reconciler.trigger();
      });
    },
    stopped: () => {
      delivery.forget();
      publisher?.forget();
      tlsState?.book.forgetAgents();
    },
  });
  const reconciler = new Reconciler({
    watch,
    pipeline: parts.pipeline,
    delivery,
    reporter: new StatusReporter({ clients, instance: options.identity, logger }),
    ...(publisher === undefined ? {} : { publisher }),
    metrics,
    logger,
    isLeader: () => election.leading,
  });
  return { watch, discovery, delivery, election, reconciler };
}

/** The election on the release's Lease; the leader metric follows it. */
function electLeader(
  { options, clients, metrics, logger }: ControlLoopParts,
  on: { readonly started: () => void; readonly stopped: () => void },
): LeaderElection {
  return new LeaderElection({
    clients,
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
      on.started();
    },
    onStoppedLeading: () => {
      metrics.leader.set(0);
      on.stopped();
    },
    logger,
  });
}
