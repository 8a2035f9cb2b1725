/**
 * Snapshot → files for the agents: the routing model, the templates, then the lint of
 * haproxy.cfg for code-loading directives (the agent's own lint). Pure apart from the
 * template engine's clock limits: the same snapshot and templates give byte-identical files
 * and the same digest.
 */
import { createHash } from 'node:crypto';
import type { Liquid } from 'liquidjs';
import { inspectHaproxyConfig } from '../validation/haproxy-config-lint.ts';
import type { BundleFile } from './agent-client.ts';
import type { ClusterSnapshot } from './cluster-snapshot.ts';
import { type ExcludedIngress, type ModelResult, buildRoutingModel } from './routing-model.ts';
import { type ParsedTemplates, renderTemplates, templateContext } from './template-engine.ts';

export interface RenderRequest {
  readonly snapshot: ClusterSnapshot;
  readonly templates: ParsedTemplates;
  readonly ingressClass: string;
  /** `namespace/name` of the default certificate Secret. */
  readonly defaultCertificate?: string;
  readonly now: Date;
}

export type RenderStage = 'template' | 'lint' | 'check';

export type BundleOutcome =
  | {
      readonly ok: true;
      /** Sorted by path; haproxy.cfg among them. */
      readonly files: readonly BundleFile[];
      readonly digest: string;
      readonly model: ModelResult;
    }
  | {
      readonly ok: false;
      readonly stage: RenderStage;
      readonly field: string;
      readonly message: string;
      readonly model: ModelResult;
    };

/** Digest of a set of files: path and content of each, in path order. */
export function bundleDigest(files: readonly BundleFile[]): string {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file.path}\0${file.content.byteLength}\0`);
    hash.update(file.content);
  }
  return `sha256:${hash.digest('hex')}`;
}

export function excludedSummary(excluded: readonly ExcludedIngress[]): string {
  return excluded.map((entry) => entry.message).join(' ');
}

export function renderBundle(engine: Liquid, request: RenderRequest): BundleOutcome {
  const model = buildRoutingModel(request.snapshot, {
    now: request.now,
    ...(request.defaultCertificate === undefined
      ? {}
      : { defaultCertificate: request.defaultCertificate }),
  });
  const rendered = renderTemplates(
    engine,
    request.templates,
    templateContext(model.model, request.ingressClass),
  );
  if (!rendered.ok) return { ...rendered, stage: 'template', model };
  const byPath = new Map<string, string>();
  for (const [path, content] of model.files) byPath.set(path, content);
  for (const file of rendered.files) {
    if (byPath.has(file.path)) {
      return {
        ok: false,
        stage: 'template',
        field: 'spec',
        message: `The template for ${file.path} collides with a certificate file of the same path; rename it.`,
        model,
      };
    }
    byPath.set(file.path, file.content);
  }
  const config = byPath.get('haproxy.cfg') ?? '';
  const { findings } = inspectHaproxyConfig(config);
  if (findings.length > 0) {
    return {
      ok: false,
      stage: 'lint',
      field: 'spec.haproxyConfig.template',
      message: `The rendered haproxy.cfg is refused: ${findings.map((finding) => finding.message).join(' ')}`,
      model,
    };
  }
  const files = [...byPath.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, content]) => ({ path, content: Buffer.from(content) }));
  return { ok: true, files, digest: bundleDigest(files), model };
}
