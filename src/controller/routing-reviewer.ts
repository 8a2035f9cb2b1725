/**
 * Admission reviews of Ingresses and HAProxyTemplateConfigs: the proposed object replaces its
 * current version in the watched state, the whole configuration is rendered, linted and
 * checked with `haproxy -c`, and a failure denies the write with HAProxy's message. Reviews
 * run at most `concurrency` at a time (the machine's cores: each check is a process).
 */
import { availableParallelism } from 'node:os';
import { type Finding, type ValidationReport, validationCodes } from '../validation/index.ts';
import type { RoutingReviewer } from '../webhook/index.ts';
import type { ClusterSnapshot } from './cluster-snapshot.ts';
import type { ClusterWatch } from './cluster-watch.ts';
import type { ConfigPipeline, PipelineOutcome } from './config-pipeline.ts';
import { isProblem } from '../validation/ingress-checks.ts';
import { ingressIsOurs, readIngress } from '../validation/ingress-view.ts';
import { validateIngress } from '../validation/validate-ingress.ts';

export interface RoutingReviewerOptions {
  readonly watch: Pick<ClusterWatch, 'snapshot' | 'templateConfig' | 'ourClassIsDefault'>;
  readonly pipeline: ConfigPipeline;
  readonly ingressClass: string;
  /** Namespace and name of the HAProxyTemplateConfig the controller renders. */
  readonly namespace: string;
  readonly templateConfigName: string;
  /** @default os.availableParallelism() */
  readonly concurrency?: number;
}

const allowed: ValidationReport = { allowed: true, findings: [] };

function deny(code: Finding['code'], path: string, message: string): ValidationReport {
  return { allowed: false, findings: [{ code, severity: 'error', path, message }] };
}

function verdict(outcome: PipelineOutcome, subject: string): ValidationReport {
  if (outcome.ok) return allowed;
  switch (outcome.stage) {
    case 'lint':
      return deny(
        validationCodes.RenderedConfigForbidden,
        outcome.field,
        `${subject}: ${outcome.message}`,
      );
    case 'check':
      return deny(
        validationCodes.RenderedConfigRejected,
        outcome.field,
        `${subject}: ${outcome.message}`,
      );
    case 'config':
    case 'template':
      return deny(
        validationCodes.TemplateConfigInvalid,
        outcome.field,
        `${subject}: ${outcome.message}`,
      );
  }
}

/** A counting semaphore: at most `limit` holders. */
class Slots {
  readonly #limit: number;
  #used = 0;
  readonly #waiting: (() => void)[] = [];
  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#used >= this.#limit) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#used += 1;
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next === undefined) this.#used -= 1;
      else next();
    }
  }
}

export function createRoutingReviewer(options: RoutingReviewerOptions): RoutingReviewer {
  const slots = new Slots(options.concurrency ?? availableParallelism());
  return {
    reviewIngress: (next, namespace) =>
      slots.run(async () => {
        const view = readIngress(next, namespace);
        if (typeof view === 'string') {
          return deny(validationCodes.IngressInvalid, 'object', view);
        }
        const label = `Ingress ${view.namespace}/${view.name}`;
        if (!ingressIsOurs(view, options.ingressClass, options.watch.ourClassIsDefault())) {
          return allowed;
        }
        const checked = validateIngress(view);
        if (isProblem(checked))
          return deny(validationCodes.IngressInvalid, checked.field, checked.message);
        const config = options.watch.templateConfig();
        if (config === undefined) return allowed;
        const current = options.watch.snapshot();
        const snapshot: ClusterSnapshot = {
          ...current,
          ingresses: [
            ...current.ingresses.filter(
              (other) => other.namespace !== view.namespace || other.name !== view.name,
            ),
            view,
          ],
        };
        const outcome = await options.pipeline.run(config, snapshot, new Date());
        const excluded = outcome.model?.excluded.find(
          (entry) => entry.namespace === view.namespace && entry.name === view.name,
        );
        if (excluded !== undefined) {
          return deny(validationCodes.IngressInvalid, excluded.field, excluded.message);
        }
        return verdict(outcome, `With ${label}`);
      }),
    reviewTemplateConfig: (next, namespace) =>
      slots.run(async () => {
        const outcome = await options.pipeline.run(next, options.watch.snapshot(), new Date(), {
          proposed: true,
        });
        return verdict(outcome, `HAProxyTemplateConfig in ${namespace}`);
      }),
  };
}
