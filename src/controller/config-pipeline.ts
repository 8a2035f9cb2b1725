/**
 * Render → lint → sandboxed `haproxy -c`, shared by the reconciler and admission. The parsed
 * templates are kept while the HAProxyTemplateConfig's resourceVersion stays; the check
 * result is kept for the last digest, so rendering the same inputs twice checks once.
 */
import type { Liquid } from 'liquidjs';
import type { BundleFile } from './agent-client.ts';
import { type BundleCheckOptions, checkBundle } from './bundle-check.ts';
import type { ClusterSnapshot } from './cluster-snapshot.ts';
import type { ControllerMetrics } from './controller-metrics.ts';
import { type RenderStage, renderBundle } from './render-bundle.ts';
import type { ModelResult } from './routing-model.ts';
import { readTemplateConfig } from './template-config.ts';
import { type ParsedTemplates, createTemplateEngine, parseTemplates } from './template-engine.ts';

export type PipelineOutcome =
  | {
      readonly ok: true;
      readonly files: readonly BundleFile[];
      readonly digest: string;
      readonly model: ModelResult;
      readonly renderMs: number;
      readonly checkMs: number;
    }
  | {
      readonly ok: false;
      readonly stage: RenderStage | 'config';
      readonly field: string;
      readonly message: string;
      readonly model?: ModelResult;
    };

export interface ConfigPipelineOptions {
  readonly ingressClass: string;
  /** `namespace/name` of the default certificate Secret. */
  readonly defaultCertificate?: string;
  readonly check?: BundleCheckOptions;
  readonly metrics?: ControllerMetrics;
}

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

export class ConfigPipeline {
  readonly #options: ConfigPipelineOptions;
  readonly #engine: Liquid = createTemplateEngine();
  #parsed: { readonly version: string; readonly templates: ParsedTemplates } | undefined;
  #lastCheck:
    { readonly digest: string; readonly ok: boolean; readonly message: string } | undefined;

  constructor(options: ConfigPipelineOptions) {
    this.#options = options;
  }

  /** Parses (or reuses) the templates of a HAProxyTemplateConfig object. */
  templatesOf(
    config: unknown,
  ): ParsedTemplates | { readonly field: string; readonly message: string } {
    // Proposed objects (admission) are never cached: only stored ones carry a resourceVersion.
    const metadata = storedMetadata(config);
    const resourceVersion = metadata?.resourceVersion ?? '';
    const version = `${metadata?.uid ?? ''}/${resourceVersion}`;
    if (resourceVersion !== '' && this.#parsed?.version === version) return this.#parsed.templates;
    const read = readTemplateConfig(config);
    if ('message' in read) return read;
    const parsed = parseTemplates(this.#engine, read);
    if ('message' in parsed) return parsed;
    if (resourceVersion !== '') this.#parsed = { version, templates: parsed };
    return parsed;
  }

  #parseProposed(
    config: unknown,
  ): ParsedTemplates | { readonly field: string; readonly message: string } {
    const read = readTemplateConfig(config);
    return 'message' in read ? read : parseTemplates(this.#engine, read);
  }

  async run(
    config: unknown,
    snapshot: ClusterSnapshot,
    now: Date,
    options: { readonly remember?: boolean; readonly proposed?: boolean } = {},
  ): Promise<PipelineOutcome> {
    const templates =
      options.proposed === true ? this.#parseProposed(config) : this.templatesOf(config);
    if ('message' in templates) return { ok: false, stage: 'config', ...templates };
    const started = performance.now();
    const rendered = renderBundle(this.#engine, {
      snapshot,
      templates,
      ingressClass: this.#options.ingressClass,
      now,
      ...(this.#options.defaultCertificate === undefined
        ? {}
        : { defaultCertificate: this.#options.defaultCertificate }),
    });
    const renderMs = performance.now() - started;
    this.#options.metrics?.renderSeconds.observe(renderMs / 1000);
    if (!rendered.ok) return rendered;
    const cached = this.#lastCheck?.digest === rendered.digest ? this.#lastCheck : undefined;
    let checkMs = 0;
    let check = cached;
    if (check === undefined) {
      const checkStarted = performance.now();
      const outcome = await checkBundle(rendered.files, this.#options.check);
      checkMs = performance.now() - checkStarted;
      this.#options.metrics?.checkSeconds.observe(checkMs / 1000);
      check = {
        digest: rendered.digest,
        ok: outcome.ok,
        message: outcome.ok ? '' : outcome.message,
      };
      // A check that could not run (timeout, missing binary) is not remembered.
      if (options.remember !== false && (outcome.ok || outcome.failure === 'rejected')) {
        this.#lastCheck = check;
      }
    }
    if (!check.ok) {
      return {
        ok: false,
        stage: 'check',
        field: 'spec.haproxyConfig.template',
        message: `haproxy -c rejects the rendered configuration: ${check.message}`,
        model: rendered.model,
      };
    }
    return {
      ok: true,
      files: rendered.files,
      digest: rendered.digest,
      model: rendered.model,
      renderMs,
      checkMs,
    };
  }
}
