/**
 * Snapshot → files for the agents: the routing model, the templates (rendered by the render
 * process, see template-renderer.ts), then the lint of haproxy.cfg (the agent's own lint).
 * The same snapshot and templates give byte-identical files and the same digest. A pipeline
 * keeps work between renders (KeptWork: backends of unchanged views, the lint of unchanged
 * files; the render process keeps loop fragments, template-fragments.ts), so a render of the
 * state with one object changed redoes that object's share; the result is the same.
 */
import { createHash } from 'node:crypto';
import { contentDigest } from '../../sandbox/content-digest.ts';
import {
  type FilesInspection,
  describeFindings,
  inspectConfigFiles,
} from '../../haproxy/files-lint.ts';
import { LintLineCache } from '../../haproxy/lint-lines.ts';
import type { CheckFailureLocation } from './check-failure-locations.ts';
import type { ApplyFile } from '../../agent-api/apply-encoding.ts';
import type { ClusterSnapshot } from '../routing/cluster-snapshot.ts';
import type { KeptBackends } from '../routing/model-backends.ts';
import type { ModelBudgets } from '../routing/model-budgets.ts';
import { type KeptModel, buildRoutingModel } from '../routing/routing-model.ts';
import type { ModelResult } from '../routing/model-types.ts';
import type { TemplateConfig } from '../../api/template-config.ts';
import { type RenderedFile, contextNames, templateContext } from './template-engine.ts';
import type { TemplateRenderer } from './template-renderer.ts';

export interface RenderRequest {
  readonly snapshot: ClusterSnapshot;
  /** The templates, and the key their parse is kept under (undefined: not kept). */
  readonly templates: { readonly key: string | undefined; readonly config: TemplateConfig };
  readonly ingressClass: string;
  /** `namespace/name` of the default certificate Secret. */
  readonly defaultCertificate?: string;
  /** @default defaultModelBudgets */
  readonly budgets?: ModelBudgets;
  readonly now: Date;
  /** `performance.now()` by which rendering must end. */
  readonly deadline?: number;
}

export type RenderStage = 'template' | 'lint' | 'check';

export type BundleOutcome =
  | {
      readonly ok: true;
      /** Sorted by path; haproxy.cfg among them. */
      readonly files: readonly ApplyFile[];
      readonly digest: string;
      readonly model: ModelResult;
    }
  | {
      readonly ok: false;
      /** `config`: a template does not parse. */
      readonly stage: 'config' | 'template' | 'lint';
      readonly field: string;
      readonly message: string;
      readonly model: ModelResult;
      /** A lint refusal: where, and the files it read, to find the Ingresses behind the lines. */
      readonly refused?: {
        readonly locations: readonly CheckFailureLocation[];
        readonly files: ReadonlyMap<string, string>;
      };
    };

/**
 * Digest of a set of files: the path (its byte length first, so no path can pass for two) and
 * the content's digest of each, in path order. Over each file's digest rather than its bytes,
 * so a file whose bytes a pipeline kept (KeptBytes) is not hashed again (contentDigest).
 */
export function bundleDigest(files: readonly ApplyFile[]): string {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${Buffer.byteLength(file.path)}:${file.path}${contentDigest(file.content)}\n`);
  }
  return `sha256:${hash.digest('hex')}`;
}

/**
 * The lint of the last bundle, reused while every file it read is the same text (the lint is
 * pure over what it reads: haproxy.cfg and its crt-lists, not the maps); otherwise only the
 * lines of haproxy.cfg that changed are read again (haproxy/lint-lines.ts).
 */
export class KeptLint {
  /** Readings of haproxy.cfg's lines, for a text that differs in a few lines. */
  readonly #lines = new LintLineCache();
  #last:
    | {
        readonly reads: ReadonlyMap<string, string | undefined>;
        readonly inspection: FilesInspection;
      }
    | undefined;

  inspect(text: (path: string) => string | undefined): FilesInspection {
    const last = this.#last;
    if (last !== undefined && [...last.reads].every(([path, content]) => text(path) === content)) {
      return last.inspection;
    }
    const reads = new Map<string, string | undefined>();
    const inspection = inspectConfigFiles((path) => {
      const content = text(path);
      reads.set(path, content);
      return content;
    }, this.#lines);
    this.#last = { reads, inspection };
    return inspection;
  }
}

/**
 * The bytes of the last bundle's files, reused for a file whose text is the same (so its
 * digest is computed once, content-digest.ts, and megabytes are not encoded again).
 */
export class KeptBytes {
  #last = new Map<string, { readonly text: string; readonly bytes: Buffer }>();

  /** The files' bytes by path; remembers these as the last. */
  encode(files: ReadonlyMap<string, string>): ReadonlyMap<string, Buffer> {
    const next = new Map<string, { readonly text: string; readonly bytes: Buffer }>();
    for (const [path, text] of files) {
      const last = this.#last.get(path);
      next.set(path, last?.text === text ? last : { text, bytes: Buffer.from(text) });
    }
    this.#last = next;
    return new Map([...next].map(([path, { bytes }]) => [path, bytes]));
  }
}

/** Work kept between renders of one pipeline: backends, the lint and bytes of unchanged files. */
export interface KeptWork {
  readonly backends: KeptBackends;
  readonly model: KeptModel;
  readonly lint: KeptLint;
  readonly bytes: KeptBytes;
}

/** The routing model a request renders from. */
export function requestModel(
  request: Omit<RenderRequest, 'templates'>,
  kept?: KeptWork,
): ModelResult {
  return buildRoutingModel(request.snapshot, {
    now: request.now,
    ...(request.defaultCertificate === undefined
      ? {}
      : { defaultCertificate: request.defaultCertificate }),
    ...(request.budgets === undefined ? {} : { budgets: request.budgets }),
    ...(kept === undefined ? {} : { keptBackends: kept.backends, keptModel: kept.model }),
  });
}

/** The model's files and the rendered ones, linted, sorted and digested. */
export function assembleBundle(
  model: ModelResult,
  rendered: readonly RenderedFile[],
  kept?: KeptWork,
): BundleOutcome {
  const byPath = new Map<string, string>();
  for (const [path, content] of model.files) byPath.set(path, content);
  for (const file of rendered) {
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
  const read = (path: string): string | undefined => byPath.get(path);
  const { findings } = kept === undefined ? inspectConfigFiles(read) : kept.lint.inspect(read);
  if (findings.length > 0) {
    return {
      ok: false,
      stage: 'lint',
      field: 'spec.haproxyConfig.template',
      message: `The rendered configuration is refused: ${describeFindings(findings)}`,
      model,
      refused: {
        // Without the line number: an Event should not change when other tenants' lines move.
        locations: findings.map((finding) => ({
          file: finding.file,
          line: finding.line,
          reason: finding.message.replace(/^line \d+: /, ''),
        })),
        files: byPath,
      },
    };
  }
  const bytes = kept === undefined ? undefined : kept.bytes.encode(byPath);
  const files = [...byPath.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, content]) => ({ path, content: bytes?.get(path) ?? Buffer.from(content) }));
  return { ok: true, files, digest: bundleDigest(files), model };
}

export async function renderBundle(
  renderer: TemplateRenderer,
  request: RenderRequest,
  kept?: KeptWork,
): Promise<BundleOutcome> {
  const model = requestModel(request, kept);
  // Leaving names out pays only when there is something to leave out: without Ingresses each
  // value is empty or one string, and the analysis (Liquid loaded, every template parsed) was
  // the longest step of the pre-rollout Job's lint of the release's own config.
  const names =
    model.model.ingresses.length === 0 ? undefined : contextNames(request.templates.config);
  const rendered = await renderer.render({
    ...request.templates,
    context: templateContext(model.model, request.ingressClass, names),
    ...(request.deadline === undefined ? {} : { deadline: request.deadline }),
  });
  if (!rendered.ok) return { ...rendered, model };
  return assembleBundle(model, rendered.files, kept);
}
