/**
 * The TLS state in the HAProxyTemplateConfig status (`status.tls.<pod>`) as the controller
 * keeps it: this replica's loaded material (on each change, and every sync interval so a
 * passed previous-CA deadline shows), the book the agents' reports go into, and, on the
 * leader, the removal of entries of Pods that are gone.
 */
import type { Logger } from 'pino';
import { describeError } from '../errors.ts';
import { apiStatus } from '../kube/api-errors.ts';
import type { KubeClients } from '../kube/kube-clients.ts';
import { TlsStatePublisher } from '../api/tls-state-publisher.ts';
import { loadedTlsReport } from '../tls/loaded-report.ts';
import type { TlsMaterialWatcher } from '../tls/material-watcher.ts';
import type { ControllerMetrics } from './status/controller-metrics.ts';
import { TlsSeries } from './status/tls-series.ts';
import { TlsStateBook } from './status/tls-state-book.ts';
import { pruneTlsState } from './status/tls-state-pruning.ts';
import type { ClusterWatch } from './watch/cluster-watch.ts';
import type { AgentDiscovery } from './delivery/agent-discovery.ts';

/** How often the leader removes the TLS state entries of Pods that are gone. */
const tlsPruneIntervalMs = 60_000;

export interface TlsStateOptions {
  readonly clients: Pick<KubeClients, 'core' | 'custom'>;
  readonly namespace: string;
  readonly templateConfig: string;
  /** This replica's Pod name, the key of its own entry. */
  readonly identity: string;
  /** @default 10 s */
  readonly syncIntervalMs?: number;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
}

export interface RecordedTlsState {
  /** Where delivery records the agents' reports. */
  readonly book: TlsStateBook;
  readonly publisher: TlsStatePublisher;
  /** Stops recording, removes this replica's own entry and writes what is queued. */
  close(): Promise<void>;
}

/** Records this replica's loaded material in the status and the metrics, from now on. */
export function recordTlsState(
  options: TlsStateOptions,
  material: TlsMaterialWatcher,
): RecordedTlsState {
  const publisher = new TlsStatePublisher({
    clients: options.clients,
    namespace: options.namespace,
    templateConfig: options.templateConfig,
    logger: options.logger,
  });
  const book = new TlsStateBook({
    pod: options.identity,
    series: new TlsSeries(options.metrics),
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

/**
 * Every minute, while this replica leads, removes the entries of Pods that are neither this
 * replica nor a discovered agent and no longer exist. Returns the timer to clear at stop.
 */
export function pruneGonePods(
  options: TlsStateOptions,
  state: RecordedTlsState,
  loop: {
    readonly isLeader: () => boolean;
    readonly watch: ClusterWatch;
    readonly discovery: AgentDiscovery;
  },
): NodeJS.Timeout {
  const { core } = options.clients;
  const podExists = async (name: string): Promise<boolean> => {
    try {
      await core.readNamespacedPod({ name, namespace: options.namespace });
      return true;
    } catch (error) {
      if (apiStatus(error) === 404) return false;
      throw error;
    }
  };
  return setInterval(() => {
    if (!loop.isLeader()) return;
    const known = new Set([
      options.identity,
      ...loop.discovery.endpoints().map((endpoint) => endpoint.name),
    ]);
    pruneTlsState({
      config: loop.watch.templateConfig(),
      known,
      podExists,
      sink: state.publisher,
    }).catch((error: unknown) => {
      options.logger.warn(
        { err: describeError(error) },
        'could not prune the TLS state of gone Pods',
      );
    });
  }, tlsPruneIntervalMs);
}
