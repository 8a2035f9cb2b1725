/**
 * Where the agents are: the `haptic-haproxy` Pods of the namespace (label selector, Pod IP,
 * agent port), watched with an informer.
 */
import { ListWatch, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeClients } from '../../kube/kube-clients.ts';
import type { AgentEndpoint } from './agent-client.ts';

export interface AgentDiscovery {
  /** The agents now, sorted by name. */
  endpoints(): readonly AgentEndpoint[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Agents of Pods that run and have an IP, not being deleted, sorted by Pod name. */
export function endpointsFromPods(pods: readonly V1Pod[], port: number): readonly AgentEndpoint[] {
  return pods
    .filter(
      (pod) =>
        pod.metadata?.deletionTimestamp === undefined &&
        pod.status?.phase === 'Running' &&
        (pod.status.podIP ?? '') !== '',
    )
    .map((pod) => ({ name: pod.metadata?.name ?? '', host: pod.status?.podIP ?? '', port }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export interface PodDiscoveryOptions {
  readonly clients: Pick<KubeClients, 'core' | 'watch'>;
  readonly namespace: string;
  readonly labelSelector: string;
  readonly agentPort: number;
  readonly onChange: () => void;
  readonly logger: Logger;
}

export function podDiscovery(options: PodDiscoveryOptions): AgentDiscovery {
  const { core } = options.clients;
  const informer = new ListWatch<V1Pod>(
    `/api/v1/namespaces/${options.namespace}/pods`,
    options.clients.watch,
    () =>
      core.listNamespacedPod({
        namespace: options.namespace,
        labelSelector: options.labelSelector,
      }),
    false,
    options.labelSelector,
  );
  for (const verb of ['add', 'update', 'delete'] as const) informer.on(verb, options.onChange);
  let stopped = false;
  informer.on('error', (error: unknown) => {
    if (stopped) return;
    options.logger.warn({ err: String(error) }, 'watching agent Pods failed; relisting in 2 s');
    setTimeout(() => {
      if (!stopped) informer.start().catch(() => undefined);
    }, 2_000).unref();
  });
  return {
    endpoints: () => endpointsFromPods(informer.list(options.namespace), options.agentPort),
    start: () => informer.start(),
    stop: () => {
      stopped = true;
      return informer.stop();
    },
  };
}
