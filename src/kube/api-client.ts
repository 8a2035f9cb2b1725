/**
 * API clients like `KubeConfig.makeApiClient`, plus a request counter and haptic's own
 * User-Agent (the API server's audit log then names the command that sent a request).
 */
import {
  type ApiConstructor,
  type ApiType,
  type KubeConfig,
  ServerConfiguration,
  createConfiguration,
  setHeaderMiddleware,
} from '@kubernetes/client-node';
import { HapticError, errorCodes } from '../errors.ts';
import type { RequestCounter } from './request-counter.ts';

export interface ApiClientOptions {
  /** Counts every request the client sends. */
  readonly counter: RequestCounter;
  /** User-Agent header, for example `haptic/0.3.0 (certificates renew)`. */
  readonly userAgent: string;
}

/** An API client of `type` for the current context of `kc`. */
export function makeApiClient<T extends ApiType>(
  kc: KubeConfig,
  type: ApiConstructor<T>,
  options: ApiClientOptions,
): T {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) {
    throw new HapticError(
      errorCodes.KUBE_CONFIG_MISSING,
      'The Kubernetes client configuration has no current cluster; set current-context.',
    );
  }
  return new type(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kc },
      middleware: [setHeaderMiddleware('User-Agent', options.userAgent)],
      promiseMiddleware: [options.counter],
    }),
  );
}
