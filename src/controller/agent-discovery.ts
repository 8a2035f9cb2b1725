/**
 * Where the agents are: the `haptic-haproxy` Pods of the namespace (label selector, Pod IP,
 * agent port), watched with an informer; or a fixed list (`--agent-endpoints`) for local runs
 * where nothing runs Pods.
 */
import { CoreV1Api, type KubeConfig, ListWatch, type V1Pod, Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { makeApiClient } from '../kube/api-client.ts';
import type { RequestCounter } from '../kube/request-counter.ts';
import type { AgentEndpoint } from './agent-client.ts';

export interface AgentDiscovery {
  /** The agents now, sorted by name. */
  endpoints(): readonly AgentEndpoint[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Parses `--agent-endpoints`: comma-separated `[name=]host:port`, for example
 * `haproxy-0=127.0.0.2:5555,haproxy-1=127.0.0.3:5555`. A sentence when it is invalid.
 */
export function parseAgentEndpoints(text: string): readonly AgentEndpoint[] | string {
  const endpoints: AgentEndpoint[] = [];
  for (const item of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^(?:([a-z0-9][-a-z0-9.]*)=)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(
      item,
    );
    const port = Number(match?.[3]);
    if (match === null || port < 1 || port > 65535) {
      return `"${item}" is not an agent endpoint such as haproxy-0=127.0.0.2:5555 or 127.0.0.2:5555.`;
    }
    const host = (match[2] ?? '').replace(/^\[(.*)\]$/, '$1');
    endpoints.push({ name: match[1] ?? `${host}:${port}`, host, port });
  }
  if (endpoints.length === 0) return 'name at least one agent endpoint.';
  return endpoints.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
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

export function staticDiscovery(endpoints: readonly AgentEndpoint[]): AgentDiscovery {
  return {
    endpoints: () => endpoints,
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
  };
}

export interface PodDiscoveryOptions {
  readonly kubeConfig: KubeConfig;
  readonly counter: RequestCounter;
  readonly userAgent: string;
  readonly namespace: string;
  readonly labelSelector: string;
  readonly agentPort: number;
  readonly onChange: () => void;
  readonly logger: Logger;
}

export function podDiscovery(options: PodDiscoveryOptions): AgentDiscovery {
  const core = makeApiClient(options.kubeConfig, CoreV1Api, {
    counter: options.counter,
    userAgent: options.userAgent,
  });
  const informer = new ListWatch<V1Pod>(
    `/api/v1/namespaces/${options.namespace}/pods`,
    new Watch(options.kubeConfig),
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
