/**
 * What the controller and its render process (render-worker.ts) say to each other over the
 * IPC channel (Node's `advanced` serialization, so plain objects arrive as sent; the template
 * context travels as JSON texts, context-transfer.ts). Each side reads what it receives once,
 * here, into the types below.
 */
import { type EncodedContext, isEncodedContext } from './context-transfer.ts';
import type { TemplateConfig, TemplateFile } from '../../api/template-config.ts';
import type { RenderedFile, TemplateLimits } from './template-engine.ts';
import { isRecord } from '../../is-record.ts';

/** Limits the render process applies itself (the parent enforces time and heap from outside). */
export type RenderWorkerLimits = Pick<
  TemplateLimits,
  'parseLimit' | 'renderLimitMs' | 'memoryLimit'
>;

export interface RenderWorkerRequest {
  readonly id: number;
  /** Reuse the parse of `config` while the key stays; undefined: parse, and forget it. */
  readonly key: string | undefined;
  readonly config: TemplateConfig;
  readonly context: EncodedContext;
  /** Milliseconds all files may take (Liquid's own check). */
  readonly limitMs: number;
}

export type RenderWorkerOutcome =
  | { readonly ok: true; readonly files: readonly RenderedFile[] }
  | {
      readonly ok: false;
      /** `config`: a template does not parse; `template`: rendering failed. */
      readonly stage: 'config' | 'template';
      readonly field: string;
      readonly message: string;
    };

/**
 * A rendered file as the render process sends it: `same` when its text is the one it sent
 * for that path in its last successful outcome (most reviews leave haproxy.cfg as it was);
 * an edit of that text when only a part changed (a review adds one line to a map): the
 * `prefix` and `suffix` lengths kept from it, `middle` between them.
 */
export type SentFile =
  | RenderedFile
  | { readonly path: string; readonly same: true }
  | {
      readonly path: string;
      readonly prefix: number;
      readonly suffix: number;
      readonly middle: string;
    };

export type SentOutcome =
  | { readonly ok: true; readonly files: readonly SentFile[] }
  | Extract<RenderWorkerOutcome, { ok: false }>;

export type RenderWorkerMessage =
  | { readonly id: number; readonly started: string }
  | { readonly id: number; readonly outcome: SentOutcome };

/** Characters compared at once (one native comparison) before the first difference is sought. */
const chunk = 1024;

/** The length of the longest common prefix of `a` and `b`, of at most `most` characters. */
export function commonPrefix(a: string, b: string, most: number): number {
  let at = 0;
  while (at + chunk <= most && a.slice(at, at + chunk) === b.slice(at, at + chunk)) at += chunk;
  while (at < most && a.charCodeAt(at) === b.charCodeAt(at)) at += 1;
  return at;
}

/** The length of the longest common suffix of `a` and `b`, of at most `most` characters. */
export function commonSuffix(a: string, b: string, most: number): number {
  let at = 0;
  while (
    at + chunk <= most &&
    a.slice(a.length - at - chunk, a.length - at) === b.slice(b.length - at - chunk, b.length - at)
  ) {
    at += chunk;
  }
  while (at < most && a.charCodeAt(a.length - 1 - at) === b.charCodeAt(b.length - 1 - at)) at += 1;
  return at;
}

/** A changed text as sent: whole, or as an edit of the last one when that is shorter. */
function changedFile(path: string, content: string, last: string | undefined): SentFile {
  if (last === undefined) return { path, content };
  const most = Math.min(content.length, last.length);
  const prefix = commonPrefix(content, last, most);
  const suffix = commonSuffix(content, last, most - prefix);
  const middle = content.slice(prefix, content.length - suffix);
  // An edit that keeps little of the last text is sent whole.
  return middle.length * 2 > content.length ? { path, content } : { path, prefix, suffix, middle };
}

/** The render process's side: files of an outcome, as texts sent last time changed. */
export function filesToSend(
  files: readonly RenderedFile[],
  sent: Map<string, string>,
): readonly SentFile[] {
  const out = files.map((file) => {
    const last = sent.get(file.path);
    return last === file.content
      ? { path: file.path, same: true as const }
      : changedFile(file.path, file.content, last);
  });
  sent.clear();
  for (const file of files) sent.set(file.path, file.content);
  return out;
}

/** The text a sent file stands for, from the last one received; undefined when it cannot. */
function receivedText(file: SentFile, last: string | undefined): string | undefined {
  if ('content' in file) return file.content;
  if (last === undefined) return undefined;
  if ('same' in file) return last;
  if (file.prefix + file.suffix > last.length) return undefined;
  return last.slice(0, file.prefix) + file.middle + last.slice(last.length - file.suffix);
}

/**
 * The controller's side: the files of an outcome with `same` and edited ones made from the
 * last outcome received (`received`, updated); a sentence when one names a text never sent.
 */
export function receivedFiles(
  files: readonly SentFile[],
  received: Map<string, string>,
): readonly RenderedFile[] | string {
  const out: RenderedFile[] = [];
  for (const file of files) {
    const content = receivedText(file, received.get(file.path));
    if (content === undefined) {
      return `it sent ${file.path} as a change of a text it did not send before`;
    }
    out.push({ path: file.path, content });
  }
  received.clear();
  for (const file of out) received.set(file.path, file.content);
  return out;
}

function isTemplateFile(value: unknown): value is TemplateFile {
  return (
    isRecord(value) &&
    typeof value.path === 'string' &&
    typeof value.template === 'string' &&
    typeof value.field === 'string'
  );
}

function isTemplateConfig(value: unknown): value is TemplateConfig {
  return (
    isRecord(value) &&
    typeof value.namespace === 'string' &&
    typeof value.name === 'string' &&
    typeof value.generation === 'number' &&
    Array.isArray(value.files) &&
    value.files.every(isTemplateFile)
  );
}

function positive(value: unknown): value is number {
  return typeof value === 'number' && value > 0;
}

export function readRenderWorkerLimits(text: string | undefined): RenderWorkerLimits | string {
  let value: unknown;
  try {
    value = JSON.parse(text ?? '');
  } catch {
    return 'the first argument is not the JSON of the render limits';
  }
  if (
    !isRecord(value) ||
    !positive(value.parseLimit) ||
    !positive(value.renderLimitMs) ||
    !positive(value.memoryLimit)
  ) {
    return 'the render limits need positive parseLimit, renderLimitMs and memoryLimit';
  }
  return {
    parseLimit: value.parseLimit,
    renderLimitMs: value.renderLimitMs,
    memoryLimit: value.memoryLimit,
  };
}

export function readRenderWorkerRequest(value: unknown): RenderWorkerRequest | string {
  if (
    !isRecord(value) ||
    typeof value.id !== 'number' ||
    (value.key !== undefined && typeof value.key !== 'string') ||
    !isTemplateConfig(value.config) ||
    !isEncodedContext(value.context) ||
    !positive(value.limitMs)
  ) {
    return 'a render request needs id, config, context and limitMs';
  }
  return {
    id: value.id,
    key: value.key,
    config: value.config,
    context: value.context,
    limitMs: value.limitMs,
  };
}

function length(value: unknown): value is number {
  return Number.isSafeInteger(value) && typeof value === 'number' && value >= 0;
}

function isSentFile(value: unknown): value is SentFile {
  return (
    isRecord(value) &&
    typeof value.path === 'string' &&
    (typeof value.content === 'string' ||
      value.same === true ||
      (length(value.prefix) && length(value.suffix) && typeof value.middle === 'string'))
  );
}

function readOutcome(value: unknown): SentOutcome | undefined {
  if (!isRecord(value)) return undefined;
  if (value.ok === true) {
    return Array.isArray(value.files) && value.files.every(isSentFile)
      ? { ok: true, files: value.files }
      : undefined;
  }
  if (
    value.ok === false &&
    (value.stage === 'config' || value.stage === 'template') &&
    typeof value.field === 'string' &&
    typeof value.message === 'string'
  ) {
    return { ok: false, stage: value.stage, field: value.field, message: value.message };
  }
  return undefined;
}

export function readRenderWorkerMessage(value: unknown): RenderWorkerMessage | undefined {
  if (!isRecord(value) || typeof value.id !== 'number') return undefined;
  if (typeof value.started === 'string') return { id: value.id, started: value.started };
  const outcome = readOutcome(value.outcome);
  return outcome === undefined ? undefined : { id: value.id, outcome };
}
