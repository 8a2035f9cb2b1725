/**
 * The admission webhook as `haptic run` serves it on every replica: the same webhook as
 * `haptic webhook` (the release's identity, issuer and pre-rollout values Secrets), plus
 * Ingresses and HAProxyTemplateConfigs reviewed against this replica's caches.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ListenAddress } from '../../net/listen-address.ts';
import {
  type IdentityOverrides,
  createReleaseIo,
  loadEmbeddedChart,
  releaseIdentities,
  routingKindRoutes,
  startWebhook,
  watchServingCertificate,
} from '../../webhook/index.ts';
import { createKubeLiveReader } from '../../webhook/kube-live-reader.ts';
import type { ClusterWatch } from '../watch/cluster-watch.ts';
import type { ConfigPipeline } from '../pipeline/config-pipeline.ts';
import type { ControllerMetrics } from '../status/controller-metrics.ts';
import { createRoutingReviewer } from './routing-reviewer.ts';

export interface ControllerWebhookOptions {
  readonly certDir: string;
  /** ca.crt of the CAs callers' client certificates must chain to; absent: none asked for. */
  readonly clientCaDir?: string;
  readonly listen: ListenAddress;
  readonly release: string;
  readonly namespace: string;
  readonly kubeConfig: KubeConfig;
  readonly userAgent: string;
  readonly watch: ClusterWatch;
  readonly pipeline: ConfigPipeline;
  readonly ingressClass: string;
  readonly templateConfig: string;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
  readonly identityOverrides?: IdentityOverrides;
}

export async function startControllerWebhook(
  options: ControllerWebhookOptions,
): Promise<{ readonly port: number; close(): Promise<void> }> {
  const { logger, metrics } = options;
  const chart = loadEmbeddedChart();
  const identities = releaseIdentities(
    options.release,
    options.namespace,
    chart,
    [],
    options.identityOverrides,
  );
  const live = createKubeLiveReader({
    kubeConfig: options.kubeConfig,
    userAgent: options.userAgent,
  });
  const certificates = await watchServingCertificate({
    dir: options.certDir,
    ...(options.clientCaDir === undefined ? {} : { clientCaDir: options.clientCaDir }),
    logger,
  });
  const reviewer = createRoutingReviewer({
    watch: options.watch,
    pipeline: options.pipeline,
    ingressClass: options.ingressClass,
    namespace: options.namespace,
    templateConfigName: options.templateConfig,
  });
  const server = await startWebhook(
    {
      ...(identities === undefined ? {} : { identities }),
      release: {
        name: options.release,
        namespace: options.namespace,
        chart,
        io: createReleaseIo({ release: options.release, namespace: options.namespace, live }),
      },
      kinds: routingKindRoutes(reviewer, {
        namespace: options.namespace,
        name: options.templateConfig,
      }),
      onReview: (event) => {
        const verdict = event.allowed ? 'allowed' : event.code === 403 ? 'denied' : 'errored';
        metrics.webhookRequests.inc({ kind: event.kind, verdict });
        metrics.webhookSeconds.observe({ kind: event.kind }, event.ms / 1000);
        logger.info(event, event.allowed ? 'admission allowed' : 'admission denied');
      },
      onHttpError: (status, message) => {
        metrics.webhookRequests.inc({ kind: 'unknown', verdict: `http_${status}` });
        logger.warn({ status }, message);
      },
    },
    { host: options.listen.host ?? '0.0.0.0', port: options.listen.port, certificates },
  );
  logger.info({ host: server.host, port: server.port }, 'webhook serving');
  return {
    port: server.port,
    close: async () => {
      certificates.close();
      await server.close();
    },
  };
}
