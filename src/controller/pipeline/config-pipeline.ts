/**
 * Render → lint → sandboxed `haproxy -c`, shared by the reconciler and admission. Rendering
 * runs in the render process (template-renderer.ts), which keeps a stored
 * HAProxyTemplateConfig's parsed templates while its uid/resourceVersion stays. Check results
 * are kept by digest (kept-checks.ts), so rendering the same inputs twice checks once, and a
 * set that differs from the last accepted one only in server slots (runtime-changes.ts:
 * addresses, ports, `disabled`, all linted) is accepted without `haproxy -c`, as the agents
 * apply it at runtime.
 *
 * When HAProxy rejects the configuration and the lines it names were made from some
 * Ingresses' values (check-failure-culprits.ts), those Ingresses are left out and the rest
 * is rendered and checked again, a bounded number of times: one tenant's object never
 * blocks the others. A line the template wrote by itself fails the whole configuration, as
 * does anything still failing after the last round; the first rejection is reported.
 */
import type { ApplyFile } from '../../agent-api/apply-encoding.ts';
import type { FileDigest } from '../../agent-api/file-set-digest.ts';
import type { ServerChange } from '../../haproxy/runtime-changes.ts';
import type { BundleCheckOptions } from './bundle-check.ts';
import { type CulpritVerdict, checkFailureCulprits } from './check-failure-culprits.ts';
import { checkFailureLocations } from '../render/check-failure-locations.ts';
import { type ClusterSnapshot, objectKey } from '../routing/cluster-snapshot.ts';
import type { ControllerMetrics } from '../status/controller-metrics.ts';
import { KeptBackends } from '../routing/model-backends.ts';
import { type ModelBudgets, defaultModelBudgets, halvedTotals } from '../routing/model-budgets.ts';
import {
  type BundleOutcome,
  KeptBytes,
  type KeptWork,
  KeptLint,
  type RenderRequest,
  type RenderStage,
  bundleDigest,
  renderBundle,
} from '../render/render-bundle.ts';
import { endpointUpdate } from './endpoint-update.ts';
import { type CheckResult, KeptChecks, type RunCheckOptions } from './kept-checks.ts';
import { type KeyedTemplates, KeptTemplateConfig } from './kept-template-config.ts';
import { KeptModel } from '../routing/routing-model.ts';
import type { ExcludedIngress, ModelResult } from '../routing/model-types.ts';
import { type TemplateLimits, defaultTemplateLimits } from '../render/template-engine.ts';
import { TemplateRenderer } from '../render/template-renderer.ts';

export type PipelineOutcome =
  | {
      readonly ok: true;
      readonly files: readonly ApplyFile[];
      readonly digest: string;
      /** The model delivered; `excluded` includes the Ingresses left out at the check. */
      readonly model: ModelResult;
      readonly renderMs: number;
      readonly checkMs: number;
      /** Known after a slot update (endpoint-update.ts), so neither hashed nor decoded again. */
      readonly fileDigests?: readonly FileDigest[];
      readonly configText?: string;
      /** The slot changes from the outcome of digest `digest` (a slot update's previous). */
      readonly runtimeFrom?: {
        readonly digest: string;
        readonly changes: readonly ServerChange[];
      };
    }
  | {
      readonly ok: false;
      readonly stage: RenderStage | 'config';
      readonly field: string;
      readonly message: string;
      readonly model?: ModelResult;
      /**
       * Stage `check` only: `haproxy -c` could not run (the sandbox did not answer in time,
       * or no time was left), so nothing is known about the configuration.
       */
      readonly unchecked?: true;
    };

type PipelineFailure = Extract<PipelineOutcome, { ok: false }>;
export type PipelineSuccess = Extract<PipelineOutcome, { ok: true }>;

export interface ConfigPipelineOptions {
  readonly ingressClass: string;
  /** `namespace/name` of the default certificate Secret. */
  readonly defaultCertificate?: string;
  /** What a namespace, and all together, may use. @default defaultModelBudgets */
  readonly budgets?: ModelBudgets;
  readonly check: BundleCheckOptions;
  readonly metrics?: ControllerMetrics;
  /** @default defaultTemplateLimits */
  readonly templateLimits?: TemplateLimits;
  /** Checks after leaving out Ingresses whose lines HAProxy rejects. @default 3 */
  readonly isolationRounds?: number;
}

export interface RunOptions extends RunCheckOptions {
  /** Milliseconds the whole run may take; rendering and checking stop when they are up. */
  readonly deadlineMs?: number;
  /**
   * Render and lint only, without `haproxy -c` (where no check sandbox runs: the pre-rollout
   * Job). A success then says nothing of what HAProxy would make of the configuration.
   */
  readonly lintOnly?: boolean;
}

/** Time a run spent rendering and checking, over all its rounds. */
interface Spent {
  renderMs: number;
  checkMs: number;
}

function withoutIngresses(
  snapshot: ClusterSnapshot,
  excluded: readonly ExcludedIngress[],
): ClusterSnapshot {
  const left = new Set(excluded.map((entry) => objectKey(entry.namespace, entry.name)));
  return {
    ...snapshot,
    ingresses: snapshot.ingresses.filter((view) => !left.has(objectKey(view.namespace, view.name))),
  };
}

/** The run's success: the rendered files, the model delivered, the time spent. */
function success(
  rendered: { readonly files: readonly ApplyFile[]; readonly digest: string },
  model: ModelResult,
  spent: Spent,
): PipelineSuccess {
  return {
    ok: true,
    files: rendered.files,
    digest: rendered.digest,
    model,
    renderMs: spent.renderMs,
    checkMs: spent.checkMs,
  };
}

/** The failure a check that did not accept the rendered configuration makes of the run. */
function checkFailure(check: CheckResult, model: ModelResult): PipelineFailure {
  return check.failure === 'rejected'
    ? {
        ok: false,
        stage: 'check',
        field: 'spec.haproxyConfig.template',
        message: `haproxy -c rejects the rendered configuration: ${check.message}`,
        model,
      }
    : {
        ok: false,
        stage: 'check',
        field: 'spec.haproxyConfig.template',
        message: `haproxy -c could not check the rendered configuration: ${check.message}`,
        model,
        unchecked: true,
      };
}

export class ConfigPipeline {
  readonly #options: ConfigPipelineOptions;
  readonly #renderer: TemplateRenderer;
  readonly #templates = new KeptTemplateConfig();
  readonly #checks: KeptChecks;
  readonly #kept: KeptWork = {
    backends: new KeptBackends(),
    model: new KeptModel(),
    lint: new KeptLint(),
    bytes: new KeptBytes(),
  };

  constructor(options: ConfigPipelineOptions) {
    this.#options = options;
    this.#renderer = new TemplateRenderer(options.templateLimits ?? defaultTemplateLimits);
    this.#checks = new KeptChecks(options.check, options.metrics);
  }

  /** Stops the render process. */
  close(): Promise<void> {
    return this.#renderer.close();
  }

  async run(
    config: unknown,
    snapshot: ClusterSnapshot,
    now: Date,
    options: RunOptions = {},
  ): Promise<PipelineOutcome> {
    const deadline =
      options.deadlineMs === undefined ? undefined : performance.now() + options.deadlineMs;
    const templates = this.#templates.read(config, options.proposed === true);
    if ('message' in templates) return { ok: false, stage: 'config', ...templates };
    const rounds = this.#options.isolationRounds ?? 3;
    const left: ExcludedIngress[] = [];
    let current = snapshot;
    let budgets = this.#options.budgets ?? defaultModelBudgets;
    let first: PipelineFailure | undefined;
    const spent: Spent = { renderMs: 0, checkMs: 0 };
    for (let round = 0; ; round += 1) {
      const request = { snapshot: current, templates, now, budgets, deadline };
      const rendered = await this.#render(request, spent);
      let verdict: CulpritVerdict;
      if (!rendered.ok) {
        // A lint refusal of lines made from Ingress values leaves those Ingresses out, as a
        // check rejection does; a refusal of the template's own lines fails the whole.
        if (rendered.refused === undefined || round >= rounds) return first ?? rendered;
        first ??= rendered;
        verdict = checkFailureCulprits({
          ...rendered.refused,
          model: rendered.model.model,
          ingresses: current.ingresses,
          refusedBy: 'the allow-list lint refuses',
        });
      } else {
        const { files, digest, model } = rendered;
        if (options.lintOnly === true) return success(rendered, model, spent);
        const check = await this.#check(digest, files, deadline, options, spent);
        if (check.ok) {
          const served =
            left.length === 0 ? model : { ...model, excluded: [...model.excluded, ...left] };
          return success(rendered, served, spent);
        }
        first ??= checkFailure(check, model);
        if (check.failure !== 'rejected' || round >= rounds) return first;
        if (check.exhausted === 'memory') {
          // Too large for the check, not wrong: the totals are halved, so the newest backends
          // and certificates are left out (BudgetExceeded) and the rest is checked again.
          budgets = halvedTotals(budgets);
          continue;
        }
        verdict = checkFailureCulprits({
          locations: checkFailureLocations(check.message),
          files: new Map(files.map((file) => [file.path, file.content.toString()])),
          model: model.model,
          ingresses: current.ingresses,
        });
      }
      if (verdict.blame === 'template') return first;
      left.push(...verdict.excluded);
      current = withoutIngresses(current, verdict.excluded);
    }
  }

  /** One render of a run's round, its time counted. */
  async #render(
    request: {
      readonly snapshot: ClusterSnapshot;
      readonly templates: KeyedTemplates;
      readonly now: Date;
      readonly budgets: ModelBudgets;
      readonly deadline: number | undefined;
    },
    spent: Spent,
  ): Promise<BundleOutcome> {
    const { deadline, ...rest } = request;
    const started = performance.now();
    const rendered = await renderBundle(
      this.#renderer,
      {
        ...rest,
        ingressClass: this.#options.ingressClass,
        ...(this.#options.defaultCertificate === undefined
          ? {}
          : { defaultCertificate: this.#options.defaultCertificate }),
        ...(deadline === undefined ? {} : { deadline }),
      } satisfies RenderRequest,
      this.#kept,
    );
    const ms = performance.now() - started;
    spent.renderMs += ms;
    this.#options.metrics?.renderSeconds.observe(ms / 1000);
    return rendered;
  }

  /** The check of a round's rendered files, its time counted. */
  async #check(
    digest: string,
    files: readonly ApplyFile[],
    deadline: number | undefined,
    options: RunOptions,
    spent: Spent,
  ): Promise<CheckResult> {
    const started = performance.now();
    const check = await this.#checks.check(digest, files, deadline, options);
    spent.checkMs += performance.now() - started;
    return check;
  }

  /**
   * After changes of EndpointSlices only: `previous` (a success of `run` or of this method)
   * with the server slots the snapshot gives and only the changed lines linted, without a
   * render or `haproxy -c` (endpoint-update.ts); `previous` itself when no slot changed. A
   * string says why a full `run` is needed instead.
   */
  updateEndpoints(previous: PipelineSuccess, snapshot: ClusterSnapshot): PipelineSuccess | string {
    const started = performance.now();
    const update = endpointUpdate(previous, snapshot, (current, namespace, ref) =>
      this.#kept.backends.build(current, namespace, ref),
    );
    if (update.kind === 'unchanged') return previous;
    if (update.kind === 'render') return update.message;
    this.#checks.accepted({ files: update.fileDigests, config: update.configText });
    const renderMs = performance.now() - started;
    this.#options.metrics?.renderSeconds.observe(renderMs / 1000);
    return {
      ok: true,
      files: update.files,
      digest: bundleDigest(update.files),
      model: update.model,
      renderMs,
      checkMs: 0,
      fileDigests: update.fileDigests,
      configText: update.configText,
      runtimeFrom: { digest: previous.digest, changes: update.changes },
    };
  }
}
