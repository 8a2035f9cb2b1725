/**
 * Render → lint → sandboxed `haproxy -c`, shared by the reconciler and admission. Rendering
 * runs in the render process (template-renderer.ts), which keeps a stored
 * HAProxyTemplateConfig's parsed templates while its uid/resourceVersion stays. Check results
 * are kept by digest, so rendering the same inputs twice checks once, and a set that differs
 * from the last accepted one only in server slots (runtime-changes.ts: addresses, ports,
 * `disabled`, all linted) is accepted without `haproxy -c`, as the agents apply it at runtime.
 *
 * When HAProxy rejects the configuration and the lines it names were made from some
 * Ingresses' values (check-failure-culprits.ts), those Ingresses are left out and the rest
 * is rendered and checked again, a bounded number of times: one tenant's object never
 * blocks the others. A line the template wrote by itself fails the whole configuration, as
 * does anything still failing after the last round; the first rejection is reported.
 */
import { configFileName } from '../../agent-api/api-types.ts';
import type { FileDigest } from '../../agent-api/file-set-digest.ts';
import type { CheckLane } from '../../sandbox/check-gate.ts';
import { contentDigest } from '../../sandbox/content-digest.ts';
import { type FileSetText, type ServerChange, runtimePlan } from '../../haproxy/runtime-changes.ts';
import type { ApplyFile } from '../../agent-api/apply-encoding.ts';
import { type BundleCheckOptions, checkBundle } from './bundle-check.ts';
import { checkFailureCulprits } from './check-failure-culprits.ts';
import { checkFailureLocations } from '../render/check-failure-locations.ts';
import { type ClusterSnapshot, objectKey } from '../routing/cluster-snapshot.ts';
import type { ControllerMetrics } from '../status/controller-metrics.ts';
import { KeptBackends } from '../routing/model-backends.ts';
import { type ModelBudgets, defaultModelBudgets, halvedTotals } from '../routing/model-budgets.ts';
import {
  KeptBytes,
  type KeptWork,
  KeptLint,
  type RenderStage,
  bundleDigest,
  renderBundle,
} from '../render/render-bundle.ts';
import { endpointUpdate } from './endpoint-update.ts';
import { KeptModel } from '../routing/routing-model.ts';
import type { ExcludedIngress, ModelResult } from '../routing/model-types.ts';
import { type TemplateConfig, readTemplateConfig } from '../../api/template-config.ts';
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

export interface RunOptions {
  /** Keep a rejection or success of `haproxy -c` for this digest. @default true */
  readonly remember?: boolean;
  /**
   * A proposed object (admission): its templates are parsed afresh and not kept, and its check
   * neither uses nor moves the last set HAProxy accepted (a set that differs from it only in
   * server slots is checked all the same): what the delivered configuration is must not
   * change the answer about a proposed one.
   */
  readonly proposed?: boolean;
  /** Milliseconds the whole run may take; rendering and checking stop when they are up. */
  readonly deadlineMs?: number;
  /** The check sandbox's lane (admission reviews have their own). @default 'delivery' */
  readonly lane?: CheckLane;
  /** Aborted when no one waits for the outcome any more: a running check is stopped. */
  readonly signal?: AbortSignal;
  /**
   * Render and lint only, without `haproxy -c` (where no check sandbox runs: the pre-rollout
   * Job). A success then says nothing of what HAProxy would make of the configuration.
   */
  readonly lintOnly?: boolean;
}

interface CheckResult {
  readonly ok: boolean;
  readonly failure?: 'rejected' | 'unavailable';
  readonly message: string;
  readonly exhausted?: 'memory';
}

/** Check results kept, by digest. */
const keptChecks = 16;

function storedMetadata(
  config: unknown,
):
  { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined } | undefined {
  if (typeof config !== 'object' || config === null || !('metadata' in config)) return undefined;
  const metadata: unknown = config.metadata;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const text = (key: string): string | undefined => {
    const value: unknown = (metadata as Record<string, unknown>)[key];
    return typeof value === 'string' ? value : undefined;
  };
  return { uid: text('uid'), resourceVersion: text('resourceVersion') };
}

function fileSetText(files: readonly ApplyFile[]): FileSetText {
  return {
    files: files.map((file) => ({ path: file.path, digest: contentDigest(file.content) })),
    config: Buffer.from(
      files.find((file) => file.path === configFileName)?.content ?? new Uint8Array(),
    ).toString('utf8'),
  };
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

export class ConfigPipeline {
  readonly #options: ConfigPipelineOptions;
  readonly #renderer: TemplateRenderer;
  #read: { readonly version: string; readonly config: TemplateConfig } | undefined;
  readonly #checks = new Map<string, CheckResult>();
  readonly #kept: KeptWork = {
    backends: new KeptBackends(),
    model: new KeptModel(),
    lint: new KeptLint(),
    bytes: new KeptBytes(),
  };
  /** The last set `haproxy -c` accepted (or one differing from such a set only in slots). */
  #lastAccepted: FileSetText | undefined;

  constructor(options: ConfigPipelineOptions) {
    this.#options = options;
    this.#renderer = new TemplateRenderer(options.templateLimits ?? defaultTemplateLimits);
  }

  /** Stops the render process. */
  close(): Promise<void> {
    return this.#renderer.close();
  }

  /** The templates of a HAProxyTemplateConfig object, and the key their parse is kept under. */
  #templates(
    config: unknown,
    proposed: boolean,
  ):
    | { readonly key: string | undefined; readonly config: TemplateConfig }
    | { readonly field: string; readonly message: string } {
    // Proposed objects (admission) carry the stored object's resourceVersion: never kept.
    const metadata = proposed ? undefined : storedMetadata(config);
    const resourceVersion = metadata?.resourceVersion ?? '';
    const version = `${metadata?.uid ?? ''}/${resourceVersion}`;
    const key = resourceVersion === '' ? undefined : version;
    if (key !== undefined && this.#read?.version === key) return { key, config: this.#read.config };
    const read = readTemplateConfig(config);
    if ('message' in read) return read;
    if (key !== undefined) this.#read = { version: key, config: read };
    return { key, config: read };
  }

  async run(
    config: unknown,
    snapshot: ClusterSnapshot,
    now: Date,
    options: RunOptions = {},
  ): Promise<PipelineOutcome> {
    const deadline =
      options.deadlineMs === undefined ? undefined : performance.now() + options.deadlineMs;
    const templates = this.#templates(config, options.proposed === true);
    if ('message' in templates) return { ok: false, stage: 'config', ...templates };
    const rounds = this.#options.isolationRounds ?? 3;
    const left: ExcludedIngress[] = [];
    let current = snapshot;
    let budgets = this.#options.budgets ?? defaultModelBudgets;
    let first: PipelineFailure | undefined;
    let renderMs = 0;
    let checkMs = 0;
    for (let round = 0; ; round += 1) {
      const started = performance.now();
      const rendered = await renderBundle(
        this.#renderer,
        {
          snapshot: current,
          templates,
          ingressClass: this.#options.ingressClass,
          now,
          ...(this.#options.defaultCertificate === undefined
            ? {}
            : { defaultCertificate: this.#options.defaultCertificate }),
          budgets,
          ...(deadline === undefined ? {} : { deadline }),
        },
        this.#kept,
      );
      const ms = performance.now() - started;
      renderMs += ms;
      this.#options.metrics?.renderSeconds.observe(ms / 1000);
      if (!rendered.ok) {
        // A lint refusal of lines made from Ingress values leaves those Ingresses out, as a
        // check rejection does; a refusal of the template's own lines fails the whole.
        if (rendered.refused === undefined || round >= rounds) return first ?? rendered;
        first ??= rendered;
        const verdict = checkFailureCulprits({
          ...rendered.refused,
          model: rendered.model.model,
          ingresses: current.ingresses,
          refusedBy: 'the allow-list lint refuses',
        });
        if (verdict.blame === 'template') return first;
        left.push(...verdict.excluded);
        current = withoutIngresses(current, verdict.excluded);
        continue;
      }
      if (options.lintOnly === true) {
        return {
          ok: true,
          files: rendered.files,
          digest: rendered.digest,
          model: rendered.model,
          renderMs,
          checkMs,
        };
      }
      const checkStarted = performance.now();
      const check = await this.#check(rendered.digest, rendered.files, deadline, options);
      checkMs += performance.now() - checkStarted;
      if (check.ok) {
        const model =
          left.length === 0
            ? rendered.model
            : { ...rendered.model, excluded: [...rendered.model.excluded, ...left] };
        return {
          ok: true,
          files: rendered.files,
          digest: rendered.digest,
          model,
          renderMs,
          checkMs,
        };
      }
      first ??=
        check.failure === 'rejected'
          ? {
              ok: false,
              stage: 'check',
              field: 'spec.haproxyConfig.template',
              message: `haproxy -c rejects the rendered configuration: ${check.message}`,
              model: rendered.model,
            }
          : {
              ok: false,
              stage: 'check',
              field: 'spec.haproxyConfig.template',
              message: `haproxy -c could not check the rendered configuration: ${check.message}`,
              model: rendered.model,
              unchecked: true,
            };
      if (check.failure !== 'rejected' || round >= rounds) return first;
      if (check.exhausted === 'memory') {
        // Too large for the check, not wrong: the totals are halved, so the newest backends
        // and certificates are left out (BudgetExceeded) and the rest is checked again.
        budgets = halvedTotals(budgets);
        continue;
      }
      const verdict = checkFailureCulprits({
        locations: checkFailureLocations(check.message),
        files: new Map(rendered.files.map((file) => [file.path, file.content.toString()])),
        model: rendered.model.model,
        ingresses: current.ingresses,
      });
      if (verdict.blame === 'template') return first;
      left.push(...verdict.excluded);
      current = withoutIngresses(current, verdict.excluded);
    }
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
    if (update.kind === 'render') return update.reason;
    this.#lastAccepted = { files: update.fileDigests, config: update.configText };
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

  /** `haproxy -c` of a digest, or its kept result. */
  async #check(
    digest: string,
    files: readonly ApplyFile[],
    deadline: number | undefined,
    options: RunOptions,
  ): Promise<CheckResult> {
    const kept = this.#checks.get(digest);
    if (kept !== undefined) return kept;
    const text = fileSetText(files);
    const proposed = options.proposed === true;
    // Only server slots differ from a set HAProxy accepted: it accepts this one too.
    if (
      !proposed &&
      this.#lastAccepted !== undefined &&
      runtimePlan(this.#lastAccepted, text).runtime
    ) {
      this.#lastAccepted = text;
      return { ok: true, message: '' };
    }
    const { check } = this.#options;
    const left = deadline === undefined ? undefined : Math.floor(deadline - performance.now());
    if (left !== undefined && left <= 0) {
      return {
        ok: false,
        failure: 'unavailable',
        message: 'no time was left before the deadline of the request to run it.',
      };
    }
    const started = performance.now();
    const outcome = await checkBundle(files, {
      ...check,
      ...(left === undefined ? {} : { timeoutMs: Math.min(check.timeoutMs ?? left, left) }),
      ...(options.lane === undefined ? {} : { lane: options.lane }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    this.#options.metrics?.checkSeconds.observe((performance.now() - started) / 1000);
    const result: CheckResult = outcome.ok
      ? { ok: true, message: '' }
      : {
          ok: false,
          failure: outcome.failure,
          message: outcome.message,
          ...(outcome.exhausted === undefined ? {} : { exhausted: outcome.exhausted }),
        };
    if (outcome.ok && !proposed) this.#lastAccepted = text;
    // A check that could not run (timeout, missing binary) is not kept.
    if (options.remember !== false && (outcome.ok || outcome.failure === 'rejected')) {
      this.#checks.set(digest, result);
      for (const old of this.#checks.keys()) {
        if (this.#checks.size <= keptChecks) break;
        this.#checks.delete(old);
      }
    }
    return result;
  }
}
