/**
 * Rendering HAProxyTemplateConfig templates with LiquidJS, locked down:
 *
 * - no file system: templates come from an empty in-memory map, so `include`, `render` and
 *   `layout` find nothing;
 * - own properties only: a template cannot reach prototypes (`constructor`, `__proto__`);
 * - strict variables and filters: a typo is an error, not an empty string;
 * - parse, render-time and memory limits, so a template cannot hang or exhaust the controller;
 * - every `{{ output }}` passes an escape that refuses CR, LF and NUL, so no value can start
 *   a configuration line of its own (the `raw` filter is replaced and cannot skip it).
 *
 * Liquid has no way to call JavaScript from a template; data is passed as plain objects.
 */
import { Liquid, type Template } from 'liquidjs';
import { describeError } from '../errors.ts';
import type { RoutingModel } from './routing-model.ts';
import type { TemplateConfig } from './template-config.ts';

export interface RenderedFile {
  readonly path: string;
  readonly content: string;
}

export type RenderOutcome =
  | { readonly ok: true; readonly files: readonly RenderedFile[] }
  | { readonly ok: false; readonly field: string; readonly message: string };

export interface TemplateLimits {
  /** Characters of all templates together. @default 4 MiB */
  readonly parseLimit: number;
  /** Milliseconds one file's rendering may take. @default 10 s */
  readonly renderLimitMs: number;
  /** Liquid's memory units (roughly characters allocated by filters and loops). @default 512 Mi */
  readonly memoryLimit: number;
}

export const defaultTemplateLimits: TemplateLimits = {
  parseLimit: 4 * 1024 * 1024,
  renderLimitMs: 10_000,
  memoryLimit: 512 * 1024 * 1024,
};

class UnsafeOutput extends Error {}

function escapeOutput(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  if (typeof value !== 'string') {
    throw new UnsafeOutput('an output is a list or an object; output one of its fields');
  }
  const text = value;
  if (/[\r\n\0]/.test(text)) {
    throw new UnsafeOutput(
      `an output would insert a line break or NUL (${JSON.stringify(text.slice(0, 60))}); values may not start configuration lines`,
    );
  }
  return text;
}

export function createTemplateEngine(limits: TemplateLimits = defaultTemplateLimits): Liquid {
  const engine = new Liquid({
    templates: {},
    ownPropertyOnly: true,
    strictFilters: true,
    strictVariables: true,
    lenientIf: true,
    jsTruthy: false,
    outputEscape: escapeOutput,
    parseLimit: limits.parseLimit,
    renderLimit: limits.renderLimitMs,
    memoryLimit: limits.memoryLimit,
    cache: false,
  });
  engine.registerFilter('raw', (value: unknown) => value);
  return engine;
}

/** The context templates see: the routing model in Liquid's snake_case. */
export function templateContext(
  model: RoutingModel,
  ingressClass: string,
): Record<string, unknown> {
  return {
    ingress_class: ingressClass,
    default_certificate: model.defaultCertificate,
    routes: model.routes.map((route) => ({
      host: route.host,
      path: route.path,
      path_type: route.pathType,
      exact_key: route.exactKey,
      prefix_key: route.prefixKey,
      backend: route.backend,
      ingress: route.ingress,
    })),
    exact_map: model.exactMap.map((entry) => ({ ...entry })),
    prefix_map: model.prefixMap.map((entry) => ({ ...entry })),
    backends: model.backends.map((backend) => ({
      name: backend.name,
      namespace: backend.namespace,
      service: backend.service,
      service_port: backend.servicePort,
      servers: backend.servers.map((server) => ({ ...server })),
    })),
    certificates: model.certificates.map((certificate) => ({
      file: certificate.file,
      secret: certificate.secret,
      hosts: [...certificate.hosts],
    })),
    ingresses: model.ingresses.map((ingress) => ({
      namespace: ingress.namespace,
      name: ingress.name,
      annotations: { ...ingress.annotations },
    })),
  };
}

/** Parsed templates of one HAProxyTemplateConfig, reused while it does not change. */
export interface ParsedTemplates {
  readonly config: TemplateConfig;
  readonly templates: readonly {
    readonly path: string;
    readonly field: string;
    readonly parsed: Template[];
  }[];
}

export function parseTemplates(
  engine: Liquid,
  config: TemplateConfig,
): ParsedTemplates | { readonly field: string; readonly message: string } {
  const templates = [];
  for (const file of config.files) {
    try {
      templates.push({ path: file.path, field: file.field, parsed: engine.parse(file.template) });
    } catch (error) {
      return {
        field: `${file.field}.template`,
        message: `HAProxyTemplateConfig ${config.namespace}/${config.name}: ${file.field}.template does not parse: ${describeError(error)}`,
      };
    }
  }
  return { config, templates };
}

/** Renders every file of the configuration with `context`. */
export function renderTemplates(
  engine: Liquid,
  parsed: ParsedTemplates,
  context: Record<string, unknown>,
): RenderOutcome {
  const files: RenderedFile[] = [];
  const { namespace, name } = parsed.config;
  for (const template of parsed.templates) {
    try {
      const content: unknown = engine.renderSync(template.parsed, context);
      files.push({ path: template.path, content: typeof content === 'string' ? content : '' });
    } catch (error) {
      return {
        ok: false,
        field: `${template.field}.template`,
        message: `HAProxyTemplateConfig ${namespace}/${name}: rendering ${template.path} failed: ${describeError(error)}`,
      };
    }
  }
  return { ok: true, files };
}
