/**
 * The controller's Prometheus metrics (prom-client), in one registry served on :9090/metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles = new Counter({
    name: 'haptic_reconciles_total',
    help: 'Reconciles by result: delivered, unchanged, not_leader, no_config, config_failed, template_failed, lint_failed, check_failed.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly renderSeconds = new Histogram({
    name: 'haptic_render_duration_seconds',
    help: 'Time to build the routing model and render every template.',
    buckets: durationBuckets,
    registers: [this.registry],
  });
  readonly checkSeconds = new Histogram({
    name: 'haptic_check_duration_seconds',
    help: 'Time of the sandboxed haproxy -c on a rendered configuration.',
    buckets: durationBuckets,
    registers: [this.registry],
  });
  readonly deliveries = new Counter({
    name: 'haptic_deliveries_total',
    help: 'Applies sent to agents, by agent and result (applied, unchanged, or the failure reason).',
    labelNames: ['agent', 'result'] as const,
    registers: [this.registry],
  });
  readonly reloads = new Counter({
    name: 'haptic_reloads_total',
    help: 'HAProxy reloads agents made for applied configurations, by agent.',
    labelNames: ['agent'] as const,
    registers: [this.registry],
  });
  readonly runtimeUpdates = new Counter({
    name: 'haptic_runtime_updates_total',
    help: 'Configurations agents applied through the HAProxy runtime API without a reload (server slot changes), by agent.',
    labelNames: ['agent'] as const,
    registers: [this.registry],
  });
  readonly runtimeChanges = new Counter({
    name: 'haptic_runtime_change_requests_total',
    help: 'Runtime changes (server slots and set digests only, POST /v1/runtime-change) sent to agents, by agent and result: applied, or the refusal reason after which the complete set was sent.',
    labelNames: ['agent', 'result'] as const,
    registers: [this.registry],
  });
  readonly ingresses = new Gauge({
    name: 'haptic_ingresses',
    help: 'Ingresses of the class in the last render, by state: served (as written), conflicting (served in part) or excluded.',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly webhookRequests = new Counter({
    name: 'haptic_webhook_requests_total',
    help: 'Admission reviews answered, by kind and verdict (allowed, denied, errored).',
    labelNames: ['kind', 'verdict'] as const,
    registers: [this.registry],
  });
  readonly webhookSeconds = new Histogram({
    name: 'haptic_webhook_duration_seconds',
    help: 'Time to answer an admission review, by kind.',
    labelNames: ['kind'] as const,
    buckets: durationBuckets,
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'haptic_leader',
    help: '1 while this replica holds the leader Lease and delivers configuration.',
    registers: [this.registry],
  });
  readonly lastSuccess = new Gauge({
    name: 'haptic_config_last_success_timestamp_seconds',
    help: 'When the leader last found its configuration running on every agent (Unix time).',
    registers: [this.registry],
  });
  readonly tlsCertificateNotAfter = new Gauge({
    name: 'haptic_tls_certificate_not_after_timestamp_seconds',
    help: 'Expiry (Unix time) of the mTLS identity each Pod has loaded, by role (controller, agent) and Pod; the leader reports the agents.',
    labelNames: ['role', 'pod'] as const,
    registers: [this.registry],
  });
  readonly tlsTrustedCa = new Gauge({
    name: 'haptic_tls_trusted_ca_info',
    help: 'CAs each Pod trusts for the mTLS link (value 1): fingerprint is the SHA-256 of the DER in lower-case hex; kind is current (ca.crt) or previous (previous-ca.crt before its deadline).',
    labelNames: ['role', 'pod', 'fingerprint', 'kind'] as const,
    registers: [this.registry],
  });
  readonly tlsPreviousCaUntil = new Gauge({
    name: 'haptic_tls_previous_ca_until_timestamp_seconds',
    help: 'Deadline (Unix time) of the previous CA each Pod still trusts; absent when it trusts none.',
    labelNames: ['role', 'pod'] as const,
    registers: [this.registry],
  });

  readonly buildInfo = new Gauge({
    name: 'haptic_build_info',
    help: "Always 1: this controller's version, the HAProxy version its configuration checks run (the image's) and Node.js.",
    labelNames: ['version', 'haproxy_version', 'nodejs_version'] as const,
    registers: [this.registry],
  });

  constructor() {
    // prom-client's own names, unprefixed as every Node.js exporter has them: process_*, nodejs_*.
    collectDefaultMetrics({ register: this.registry });
  }

  /** Sets haptic_build_info (once, at start). */
  setBuildInfo(build: { readonly version: string; readonly haproxyVersion: string | undefined }) {
    this.buildInfo.set(
      {
        version: build.version,
        haproxy_version: build.haproxyVersion ?? 'unknown',
        nodejs_version: process.version,
      },
      1,
    );
  }
}
