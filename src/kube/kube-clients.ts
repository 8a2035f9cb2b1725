/**
 * The API clients the controller needs, made once from a KubeConfig: each counts its
 * requests on one counter and sends haptic's User-Agent. Parts take the clients they use
 * (`Pick<KubeClients, 'core' | 'networking'>`), so a test hands them the same bundle.
 */
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  NetworkingV1Api,
  Watch,
} from '@kubernetes/client-node';
import { type ApiClientOptions, makeApiClient } from './api-client.ts';
import type { RequestCounter } from './request-counter.ts';

export interface KubeClients {
  /** The configuration the clients were made from (for readers that open their own connection). */
  readonly kubeConfig: KubeConfig;
  readonly userAgent: string;
  /** Counts the requests of every client below except `watch`. */
  readonly counter: RequestCounter;
  readonly core: CoreV1Api;
  readonly networking: NetworkingV1Api;
  readonly discovery: DiscoveryV1Api;
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
  /** The informers' watch requests (the client's own, uncounted). */
  readonly watch: Watch;
}

/** Every client of the bundle; throws KUBE_CONFIG_MISSING when `kubeConfig` has no current cluster. */
export function makeKubeClients(kubeConfig: KubeConfig, options: ApiClientOptions): KubeClients {
  return {
    kubeConfig,
    userAgent: options.userAgent,
    counter: options.counter,
    core: makeApiClient(kubeConfig, CoreV1Api, options),
    networking: makeApiClient(kubeConfig, NetworkingV1Api, options),
    discovery: makeApiClient(kubeConfig, DiscoveryV1Api, options),
    custom: makeApiClient(kubeConfig, CustomObjectsApi, options),
    coordination: makeApiClient(kubeConfig, CoordinationV1Api, options),
    watch: new Watch(kubeConfig),
  };
}
