/**
 * Admission reviews of Ingresses and HAProxyTemplateConfigs: a proposed Ingress replaces its
 * current version in the watched state, a proposed HAProxyTemplateConfig is rendered for an
 * empty cluster (below); the configuration is rendered, linted and checked with `haproxy -c`,
 * and a failure denies the write with HAProxy's message. Reviews run at most `concurrency` at
 * a time (the machine's cores, at most {@link maxConcurrentReviews}: each check is a process),
 * and their checks wait in the check sandbox's review lane, which never fills the slot the
 * reconciler's checks keep.
 *
 * An Ingress that would newly claim a host and path another namespace's Ingress serves is
 * denied before anything is rendered (ingress-claims.ts), as is one whose TLS Secret HAProxy
 * would not load; what the model would leave out of an allowed Ingress comes back as
 * admission warnings.
 *
 * A review's deadline is the webhook's (the nearer of its own and the API server's, counted from
 * the request's arrival, before it waits for a slot): rendering and checking stop
 * {@link answerMarginMs} before it, so a template that runs too long is answered with a denial
 * naming the cause rather than the webhook's bare time-out. A check that cannot run in time (a
 * long queue, a slow or restarting sandbox) is allowed with a RenderUnchecked warning: the
 * controller checks again before delivery. Once the answer is sent or no longer awaited, a
 * review still waiting for a slot leaves, and its check in the sandbox is stopped.
 *
 * Why a proposed HAProxyTemplateConfig sees an empty cluster only: anyone who reaches the
 * webhook can send one (the API server does not authenticate to webhooks), and a template can
 * make its own success depend on any fact of the state (`{% if routes.size > 0 %}` before a line
 * HAProxy refuses), so an answer about the template with the current objects told the sender one
 * bit of other tenants' data per review. Rendered for no Ingresses, Services or Secrets, the
 * answer is a function of the sent object alone (the same whatever any namespace holds), and
 * a denial may quote rendered text, which is then the template's own. A template that passes
 * here and fails with the real objects is the reconciler's to report: it keeps delivering the
 * last good configuration, leaves out the Ingresses whose lines HAProxy refuses (with Events),
 * and sets the HAProxyTemplateConfig's Ready condition to the failure. That status is read with
 * RBAC on the object, not by whoever reaches :9443.
 */
import { availableParallelism } from 'node:os';
import { type Finding, type ValidationReport, validationCodes } from '../../validation/index.ts';
import { warning } from '../../validation/finding.ts';
import type { ReviewContext } from '../../webhook/review-context.ts';
import type { RoutingReviewer } from '../../webhook/index.ts';
import { type ClusterSnapshot, emptySnapshot } from '../routing/cluster-snapshot.ts';
import type { ClusterWatch } from '../watch/cluster-watch.ts';
import type { ConfigPipeline, PipelineOutcome } from '../pipeline/config-pipeline.ts';
import { ingressEventReasons } from '../routing/ingress-event-reasons.ts';
import { isProblem } from '../../validation/ingress-checks.ts';
import { ClaimHolders, newCrossNamespaceClaims } from '../../validation/ingress-claims.ts';
import { HostOwners, newForeignHosts } from '../../validation/host-ownership.ts';
import { hostSharingAnnotation } from '../../validation/host-sharing.ts';
import { annotationPrefix } from '../../validation/ingress-checks.ts';
import { type IngressView, ingressIsOurs, readIngress } from '../../validation/ingress-view.ts';
import type { ValidIngress } from '../../validation/validate-ingress.ts';
import { checkedIngress } from '../routing/checked-ingress.ts';

export interface RoutingReviewerOptions {
  readonly watch: Pick<ClusterWatch, 'snapshot' | 'templateConfig' | 'ourClassIsDefault'>;
  readonly pipeline: ConfigPipeline;
  readonly ingressClass: string;
  /** Namespace and name of the HAProxyTemplateConfig the controller renders. */
  readonly namespace: string;
  readonly templateConfigName: string;
  /** @default os.availableParallelism(), at most {@link maxConcurrentReviews} */
  readonly concurrency?: number;
}

/**
 * Reviews at once when the machine has more cores. Renders take turns in one render process and
 * review checks get all but one of the sandbox's few slots (check-gate.ts), so more reviews at
 * once only wait there; and on a node of many cores (what a container sees) they could take
 * more of the sandbox's connections than it keeps, so that delivery's would be dropped.
 */
const maxConcurrentReviews = 4;

/** Time kept back from the webhook's deadline to send the denial rendering or checking ended in. */
const answerMarginMs = 500;

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
      // Not checked is not rejected: an overloaded or restarting sandbox must not block a
      // valid write. The controller checks before it delivers and leaves out what HAProxy
      // rejects; the writer is told the check did not run.
      if (outcome.unchecked === true) {
        return {
          allowed: true,
          findings: [
            warning(
              validationCodes.RenderUnchecked,
              outcome.field,
              `${subject}: not checked at admission, ${outcome.message} The controller checks it before delivery.`,
            ),
          ],
        };
      }
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

/** The claims of a state's Ingresses, for the claim check of every review against it. */
interface StateClaims {
  readonly ingresses: readonly IngressView[];
  readonly holders: ClaimHolders;
  readonly owners: HostOwners;
  /** Valid Ingresses by `namespace/name`. */
  readonly byName: ReadonlyMap<string, ValidIngress>;
}

/** `kept` while the state holds the very same Ingress views, else the claims of `ingresses`. */
function stateClaims(
  kept: StateClaims | undefined,
  ingresses: readonly IngressView[],
): StateClaims {
  if (
    kept !== undefined &&
    (kept.ingresses === ingresses ||
      (kept.ingresses.length === ingresses.length &&
        kept.ingresses.every((view, i) => view === ingresses[i])))
  ) {
    return kept;
  }
  const valid: ValidIngress[] = [];
  for (const view of ingresses) {
    const checked = checkedIngress(view);
    if (!isProblem(checked)) valid.push(checked);
  }
  return {
    ingresses,
    holders: new ClaimHolders(valid),
    owners: new HostOwners(valid),
    byName: new Map(valid.map((ingress) => [`${ingress.namespace}/${ingress.name}`, ingress])),
  };
}

/** Denies hosts that other namespaces own, and claims of paths their Ingresses serve. */
function claimVerdict(proposed: ValidIngress, state: StateClaims): ValidationReport | undefined {
  const previous = state.byName.get(`${proposed.namespace}/${proposed.name}`);
  const label = `${proposed.namespace}/${proposed.name}`;
  const foreign = newForeignHosts(proposed, previous, state.owners);
  const [host] = foreign;
  if (host !== undefined) {
    const hosts = foreign
      .slice(0, 3)
      .map(
        (each) =>
          `${each.host === '*' ? 'rules without a host' : `host ${each.host}`} (${each.field}), owned by namespace ${each.owner.namespace} (Ingress ${each.owner.namespace}/${each.owner.name})`,
      )
      .join('; ');
    const more = foreign.length > 3 ? ` and ${String(foreign.length - 3)} more` : '';
    return deny(
      validationCodes.IngressInvalid,
      host.field,
      `Ingress ${label} names what another namespace owns: ${hosts}${more}. A host belongs to the namespace whose Ingress named it first; use another host, or have the owner add ${proposed.namespace} to the ${annotationPrefix}${hostSharingAnnotation} annotation of its Ingress.`,
    );
  }
  const conflicts = newCrossNamespaceClaims(proposed, previous, state.holders);
  const [first] = conflicts;
  if (first === undefined) return undefined;
  const claims = conflicts
    .slice(0, 3)
    .map(
      (conflict) => `${conflict.claim} (${conflict.field}), served by Ingress ${conflict.holder}`,
    )
    .join('; ');
  const more = conflicts.length > 3 ? ` and ${String(conflicts.length - 3)} more` : '';
  return deny(
    validationCodes.IngressInvalid,
    first.field,
    `Ingress ${label} claims what an Ingress of another namespace already serves: ${claims}${more}. Use another host or path, or have the other Ingress's owner remove it first.`,
  );
}

/** The answer to a review given up while it waited for a slot: nothing was looked at. */
const abandoned: ValidationReport = {
  allowed: true,
  findings: [
    warning(
      validationCodes.RenderUnchecked,
      'spec',
      'Not checked at admission: the review was answered or given up before it could run. The controller checks it before delivery.',
    ),
  ],
};

/** A counting semaphore: at most `limit` holders; a waiter whose review is over leaves. */
class Slots {
  readonly #limit: number;
  #used = 0;
  readonly #waiting: (() => void)[] = [];
  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }
  async run(work: () => Promise<ValidationReport>, over: AbortSignal): Promise<ValidationReport> {
    if (over.aborted) return abandoned;
    if (this.#used >= this.#limit) {
      const admitted = await new Promise<boolean>((resolve) => {
        const admit = (): void => {
          over.removeEventListener('abort', leave);
          resolve(true);
        };
        const leave = (): void => {
          this.#waiting.splice(this.#waiting.indexOf(admit), 1);
          resolve(false);
        };
        this.#waiting.push(admit);
        over.addEventListener('abort', leave, { once: true });
      });
      if (!admitted) return abandoned;
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
  const slots = new Slots(
    options.concurrency ?? Math.min(availableParallelism(), maxConcurrentReviews),
  );
  /** What the pipeline takes of a review: its time (less the margin), lane and end. */
  const runOptions = (review: ReviewContext) => ({
    deadlineMs: review.deadline - answerMarginMs - performance.now(),
    lane: 'review' as const,
    signal: review.signal,
  });
  let claims: StateClaims | undefined;
  return {
    reviewIngress: (next, namespace, review) =>
      slots.run(async () => {
        const view = readIngress(next, namespace);
        if (typeof view === 'string') {
          return deny(validationCodes.IngressInvalid, 'object', view);
        }
        const label = `Ingress ${view.namespace}/${view.name}`;
        if (!ingressIsOurs(view, options.ingressClass, options.watch.ourClassIsDefault())) {
          return allowed;
        }
        const checked = checkedIngress(view);
        if (isProblem(checked))
          return deny(validationCodes.IngressInvalid, checked.field, checked.message);
        const current = options.watch.snapshot();
        claims = stateClaims(claims, current.ingresses);
        const claimed = claimVerdict(checked, claims);
        if (claimed !== undefined) return claimed;
        const config = options.watch.templateConfig();
        if (config === undefined) return allowed;
        const snapshot: ClusterSnapshot = {
          ...current,
          ingresses: [
            ...current.ingresses.filter(
              (other) => other.namespace !== view.namespace || other.name !== view.name,
            ),
            view,
          ],
        };
        const outcome = await options.pipeline.run(
          config,
          snapshot,
          new Date(),
          runOptions(review),
        );
        const excluded = outcome.model?.excluded.find(
          (entry) => entry.namespace === view.namespace && entry.name === view.name,
        );
        if (excluded !== undefined) {
          return deny(validationCodes.IngressInvalid, excluded.field, excluded.message);
        }
        const key = `${view.namespace}/${view.name}`;
        const warnings = (outcome.model?.warnings ?? []).filter((entry) => entry.ingress === key);
        const tls = warnings.find((entry) => entry.reason === ingressEventReasons.TLSSecretInvalid);
        if (tls !== undefined) return deny(validationCodes.IngressInvalid, 'spec.tls', tls.message);
        const report = verdict(outcome, `With ${label}`);
        return {
          ...report,
          findings: [
            ...report.findings,
            ...warnings.map((entry) =>
              warning(validationCodes.IngressInvalid, 'spec', entry.message),
            ),
          ],
        };
      }, review.signal),
    // Rendered for an empty cluster only, whatever the watch holds (see the top of this file).
    // Its check result is not kept either: a flood of reviews would push the reconciler's out.
    reviewTemplateConfig: (next, namespace, review) =>
      slots.run(async () => {
        const outcome = await options.pipeline.run(next, emptySnapshot, new Date(), {
          ...runOptions(review),
          proposed: true,
          remember: false,
        });
        return verdict(outcome, `HAProxyTemplateConfig in ${namespace}`);
      }, review.signal),
  };
}
