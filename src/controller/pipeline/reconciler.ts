/**
 * The reconcile loop: changes are debounced (the first after a quiet period goes at once),
 * then the current snapshot goes through the pipeline (render → lint → haproxy -c). A good
 * result becomes the desired configuration and, on the leader, is delivered to every agent;
 * a failure keeps the last good one everywhere and is reported (status condition and Event
 * with HAProxy's message). Ingresses left out (by the routing model, or at the check for
 * lines HAProxy rejects) or served in part get one Event each; once every agent runs a
 * configuration, the Ingresses in it carry the published address in their status; metrics
 * count everything.
 */
import type { Logger } from 'pino';
import { describeError } from '../../errors.ts';
import { type AgentDelivery, desiredConfig } from '../delivery/agent-delivery.ts';
import type { AgentApplyResult } from '../delivery/agent-fanout.ts';
import type { ClusterWatch, WatchedKind } from '../watch/cluster-watch.ts';
import type { ConfigPipeline, PipelineOutcome } from './config-pipeline.ts';
import type { ControllerMetrics } from '../status/controller-metrics.ts';
import { ingressEvents, ingressStates } from '../routing/ingress-events.ts';
import type { IngressStatusPublisher } from '../status/ingress-status-publisher.ts';
import { type ClusterSnapshot, objectKey } from '../routing/cluster-snapshot.ts';
import type { ModelIngress, ModelResult } from '../routing/model-types.ts';
import { readyReasons } from '../../api/ready-condition.ts';
import { type StatusReporter, templateConfigRef } from '../../api/status-reporter.ts';

export interface ReconcilerOptions {
  readonly watch: ClusterWatch;
  readonly pipeline: ConfigPipeline;
  readonly delivery: AgentDelivery;
  readonly reporter: StatusReporter;
  /** Writes the address in the status of served Ingresses; none: status is left alone. */
  readonly publisher?: IngressStatusPublisher;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
  readonly isLeader: () => boolean;
  /** Quiet time before a reconcile. @default 100 ms */
  readonly debounceMs?: number;
  /** Longest delay of a reconcile under a stream of changes. @default 1 s */
  readonly maxDelayMs?: number;
  /**
   * Quiet time after endpoint changes applied to server slots without rendering
   * (endpoint-update.ts) before a full render confirms them. @default 1 s
   */
  readonly confirmAfterMs?: number;
  /** Longest delay of that full render under a stream of endpoint changes. @default 10 s */
  readonly confirmWithinMs?: number;
}

const reasons = {
  config: readyReasons.TemplateConfigInvalid,
  template: readyReasons.RenderFailed,
  lint: readyReasons.LintFailed,
  check: readyReasons.CheckFailed,
} as const;

export class Reconciler {
  readonly #options: ReconcilerOptions;
  #timer: NodeJS.Timeout | undefined;
  #firstPending = 0;
  /** Whether the next reconcile renders in full (anything but EndpointSlices changed). */
  #fullRender = true;
  #confirm: NodeJS.Timeout | undefined;
  #firstConfirm = 0;
  /** When the last reconcile started (Date.now()). */
  #lastStarted = 0;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #lastOutcome: PipelineOutcome | undefined;
  /** Ingresses with an Event about their exclusion, to report each problem once. */
  #reported = new Set<string>();

  constructor(options: ReconcilerOptions) {
    this.#options = options;
  }

  /** The last pipeline outcome (for readiness and tests). */
  get lastOutcome(): PipelineOutcome | undefined {
    return this.#lastOutcome;
  }

  /**
   * Schedules a reconcile: at once for the first change after a quiet debounce period (a
   * single endpoint change waits for nothing), otherwise after the debounce, gathering the
   * changes that follow, and never later than `maxDelayMs` after the first of them.
   */
  trigger(kind?: WatchedKind): void {
    if (this.#stopped) return;
    // Endpoint rules change servers only, as EndpointSlices do: the slot update rebuilds every
    // backend under the new rules, and renders in full when one leaves endpoints out.
    if (kind !== 'EndpointSlice' && kind !== 'EndpointRules') this.#fullRender = true;
    const now = Date.now();
    const debounce = this.#options.debounceMs ?? 100;
    // A reconcile under way does not make the change wait: run() queues one more right after
    // it, which takes every change that arrived meanwhile.
    const quiet = this.#timer === undefined && now - this.#lastStarted >= debounce;
    if (this.#timer === undefined) this.#firstPending = now;
    clearTimeout(this.#timer);
    const wait = quiet
      ? 0
      : Math.max(
          0,
          Math.min(debounce, this.#firstPending + (this.#options.maxDelayMs ?? 1_000) - now),
        );
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.run();
    }, wait);
  }

  /** Reconciles now (after the one under way, if any). */
  async run(): Promise<void> {
    if (this.#running !== undefined) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        this.#lastStarted = Date.now();
        try {
          await this.#reconcile();
        } catch (error) {
          this.#options.logger.error({ err: describeError(error) }, 'reconcile failed');
        }
      } while (this.#runAgain());
    })().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Whether changes arrived during the last reconcile (set asynchronously by run()). */
  #runAgain(): boolean {
    return this.#again && !this.#stopped;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#confirm);
  }

  async #reconcile(): Promise<void> {
    const { watch, pipeline, delivery, reporter, metrics, logger } = this.#options;
    const config = watch.templateConfig();
    if (config === undefined) {
      metrics.reconciles.inc({ result: 'no_config' });
      logger.warn('the HAProxyTemplateConfig does not exist; nothing to render');
      return;
    }
    const snapshot = watch.snapshot();
    const outcome =
      this.#endpointUpdate(snapshot) ?? (await pipeline.run(config, snapshot, new Date()));
    this.#lastOutcome = outcome;
    const leader = this.#options.isLeader();
    const ref = templateConfigRef(config);
    const generation = config.metadata?.generation ?? 0;
    if (outcome.model !== undefined) {
      for (const [state, count] of Object.entries(ingressStates(outcome.model))) {
        metrics.ingresses.set({ state }, count);
      }
      if (leader) await this.#reportIngresses(outcome.model, snapshot);
    }
    if (!outcome.ok) {
      metrics.reconciles.inc({ result: `${outcome.stage}_failed` });
      logger.error({ stage: outcome.stage, field: outcome.field }, outcome.message);
      if (leader) {
        const reason = reasons[outcome.stage];
        await reporter.setCondition(config, {
          ready: false,
          reason,
          message: `${outcome.message} The agents keep the last good configuration.`,
          observedGeneration: generation,
        });
        await reporter.event(ref, 'Warning', { reason, message: outcome.message });
      }
      return;
    }
    const unchanged = delivery.desired?.digest === outcome.digest;
    if (!unchanged) {
      delivery.setDesired(desiredConfig(outcome.files, outcome.digest, outcome));
      logger.info(
        {
          digest: outcome.digest,
          renderMs: Math.round(outcome.renderMs),
          checkMs: Math.round(outcome.checkMs),
          ingresses: outcome.model.model.ingresses.length,
          excluded: outcome.model.excluded.length,
        },
        'rendered a new configuration',
      );
    }
    if (!leader) {
      metrics.reconciles.inc({ result: 'not_leader' });
      return;
    }
    const delivering = performance.now();
    const { results, waiting } = await delivery.deliver();
    if (results.length > 0) {
      logger.info(
        {
          digest: outcome.digest,
          agents: results.length,
          failed: results.filter((result) => !result.ok).length,
          deliverMs: Math.round((performance.now() - delivering) * 10) / 10,
        },
        'delivered to the agents',
      );
    }
    if (waiting.length > 0) {
      logger.info(
        { digest: outcome.digest, agents: waiting.map((endpoint) => endpoint.name) },
        'agents still answering an earlier call get this configuration when it ends',
      );
    }
    metrics.reconciles.inc({
      result: results.length === 0 && waiting.length === 0 && unchanged ? 'unchanged' : 'delivered',
    });
    // Agents passed over are reported by the delivery that follows their call.
    if (waiting.length > 0 && results.every((result) => result.ok)) return;
    await this.#reportDelivery(config, outcome.digest, results, outcome.model.model.ingresses);
  }

  /**
   * When only EndpointSlices changed since the last good render: that render with its server
   * slots updated, no render or check (a full render follows once changes pause, to confirm).
   * Undefined when the reconcile must render in full.
   */
  #endpointUpdate(snapshot: ClusterSnapshot): PipelineOutcome | undefined {
    const full = this.#fullRender;
    this.#fullRender = false;
    const last = this.#lastOutcome;
    if (full || last?.ok !== true) return undefined;
    const update = this.#options.pipeline.updateEndpoints(last, snapshot);
    if (typeof update === 'string') {
      this.#options.logger.debug({ reason: update }, 'rendering in full');
      return undefined;
    }
    if (update !== last) {
      this.#options.logger.info(
        { digest: update.digest, updateMs: Math.round(update.renderMs) },
        'updated server slots without rendering',
      );
      this.#scheduleConfirmation();
    }
    return update;
  }

  #scheduleConfirmation(): void {
    const now = Date.now();
    if (this.#confirm === undefined) this.#firstConfirm = now;
    clearTimeout(this.#confirm);
    const wait = Math.max(
      0,
      Math.min(
        this.#options.confirmAfterMs ?? 1_000,
        this.#firstConfirm + (this.#options.confirmWithinMs ?? 10_000) - now,
      ),
    );
    this.#confirm = setTimeout(() => {
      this.#confirm = undefined;
      this.trigger();
    }, wait);
  }

  /**
   * Reports the agents' answers: Ready when every agent runs the configuration; then its
   * Ingresses carry the published address.
   */
  async #reportDelivery(
    config: Parameters<StatusReporter['setCondition']>[0],
    digest: string,
    results: readonly AgentApplyResult[],
    served: readonly ModelIngress[],
  ): Promise<void> {
    const { reporter, delivery, metrics, publisher } = this.#options;
    const failed = results.filter((result) => !result.ok);
    const generation = config.metadata?.generation ?? 0;
    if (failed.length === 0) {
      if (results.length > 0 || delivery.desired?.digest === digest) {
        // Stamped when the agents answered, not after the status write (which may be slow).
        metrics.lastSuccess.setToCurrentTime();
        await reporter.setCondition(config, {
          ready: true,
          reason: readyReasons.Delivered,
          message: `The configuration ${digest.slice(0, 19)} passed haproxy -c and runs on the agents.`,
          observedGeneration: generation,
          delivered: { digest },
        });
        await publisher?.publish(served);
      }
      return;
    }
    const messages = failed.map((result) => result.error.haproxyMessage ?? result.error.message);
    const message = `${failed.length} of ${results.length} agents did not take the configuration: ${messages.join(' | ')}`;
    await reporter.setCondition(config, {
      ready: false,
      reason: readyReasons.DeliveryFailed,
      message,
      observedGeneration: generation,
    });
    await reporter.event(templateConfigRef(config), 'Warning', {
      reason: readyReasons.DeliveryFailed,
      message,
    });
  }

  /**
   * One Warning Event per Ingress not served as written: left out by the routing model or at
   * the check (the pipeline adds those to `excluded`), or served in part.
   */
  async #reportIngresses(model: ModelResult, snapshot: ClusterSnapshot): Promise<void> {
    const { reporter } = this.#options;
    const uids = new Map(
      snapshot.ingresses.map((view) => [objectKey(view.namespace, view.name), view.uid]),
    );
    const now = new Set<string>();
    for (const event of ingressEvents(model)) {
      const key = objectKey(event.namespace, event.name);
      now.add(key);
      const ingress = { namespace: event.namespace, name: event.name, uid: uids.get(key) ?? '' };
      await reporter.ingressEvent(ingress, 'Warning', event);
    }
    for (const key of this.#reported) {
      if (now.has(key)) continue;
      const [namespace = '', name = ''] = key.split('/');
      reporter.forget('Ingress', namespace, name);
    }
    this.#reported = now;
  }
}
