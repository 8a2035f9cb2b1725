/**
 * Rendering HAProxyTemplateConfig templates with LiquidJS, locked down:
 *
 * - no file system: templates come from an empty in-memory map, so `include`, `render` and
 *   `layout` find nothing;
 * - own properties only: a template cannot reach prototypes (`constructor`, `__proto__`);
 * - strict variables and filters: a typo is an error, not an empty string;
 * - parse, render-time and memory limits; rendering runs in a separate process
 *   (template-renderer.ts) that is killed at the time limit and has a heap limit of its own,
 *   so loops, ranges and output count against hard limits, not only Liquid's own counters;
 * - no file larger than the agents accept;
 * - every `{{ output }}` passes an escape that refuses CR, LF and NUL, so no value can start
 *   a configuration line of its own (the `raw` filter is replaced and cannot skip it);
 * - loops whose body depends on the item alone reuse what it rendered for an item seen in the
 *   last render (template-fragments.ts), so rendering the state with one object changed
 *   renders that object's iterations only.
 *
 * Liquid has no way to call JavaScript from a template; data is passed as plain objects.
 */
import { Liquid, Output, type Template } from 'liquidjs';
import { defaultApplyLimits } from '../../agent-api/apply-request.ts';
import { describeError } from '../../errors.ts';
import type { KeptFiles } from './kept-files.ts';
import type { RoutingModel } from '../routing/model-types.ts';
import { canaryItems, optionsItem } from './option-items.ts';
import { lastingItem } from './context-transfer.ts';
import { type MappedList, mappedReusing } from '../routing/sorted-reuse.ts';
import { reusingForTag } from './template-fragments.ts';
import { computesNames } from './template-purity.ts';
import type { TemplateConfig } from '../../api/template-config.ts';

export interface RenderedFile {
  readonly path: string;
  readonly content: string;
}

export type RenderOutcome =
  | { readonly ok: true; readonly files: readonly RenderedFile[] }
  | { readonly ok: false; readonly field: string; readonly message: string };

export interface TemplateLimits {
  /** Characters of one template. @default 4 MiB */
  readonly parseLimit: number;
  /**
   * Milliseconds rendering all files of a configuration may take. Liquid checks it between
   * tags; the render process is killed when it is reached, whatever the template is doing.
   * @default 10 s
   */
  readonly renderLimitMs: number;
  /**
   * Liquid's memory units: ranges count their length, filters the characters and items they
   * allocate (loops and output do not; the heap limit bounds those). @default 64 Mi
   */
  readonly memoryLimit: number;
  /**
   * V8 heap (old generation) of the render process, in MB; it is killed beyond. The chart's
   * default template needs under 32 MB for 5,000 Ingresses and 96 MB for 20,000.
   * @default 128
   */
  readonly heapMb: number;
}

export const defaultTemplateLimits: TemplateLimits = {
  parseLimit: 4 * 1024 * 1024,
  renderLimitMs: 10_000,
  memoryLimit: 64 * 1024 * 1024,
  heapMb: 128,
};

/** Largest rendered file: what an agent accepts in one apply. */
const maxRenderedFileBytes = defaultApplyLimits.maxFileBytes;

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

export function createTemplateEngine(
  limits: Pick<
    TemplateLimits,
    'parseLimit' | 'renderLimitMs' | 'memoryLimit'
  > = defaultTemplateLimits,
): Liquid {
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
    // Named, not probed: Liquid otherwise asks Intl for the process's locale, which loads ICU's
    // data (20-30 ms of each render process's start). The render process's environment has no
    // LANG, so the probe said en-US too; `date` names months and days in English either way.
    locale: 'en-US',
  });
  engine.registerFilter('raw', (value: unknown) => value);
  engine.registerTag('for', reusingForTag(escapeFilterName(engine)));
  return engine;
}

/** The name Liquid gives the output escape it appends to every `{{ output }}`. */
export function escapeFilterName(engine: Liquid): string {
  const [probe] = engine.parse('{{ x }}');
  const name = probe instanceof Output ? probe.value.filters.at(-1)?.name : undefined;
  if (name === undefined) throw new Error('Liquid appended no output escape to an output.');
  return name;
}

type ModelBackend = RoutingModel['backends'][number];
type ModelRoute = RoutingModel['routes'][number];
type MapEntry = RoutingModel['exactMap'][number];
type ModelIngress = RoutingModel['ingresses'][number];

/**
 * A context item made once per model object (the model reuses the objects of everything an
 * update did not change: backends while their Service stands, routes, map entries and
 * Ingresses while their Ingress does), its JSON text made once with it (lastingItem).
 */
function itemCache<K extends object>(
  make: (key: K) => Readonly<Record<string, unknown>>,
): (key: K) => Readonly<Record<string, unknown>> {
  const items = new WeakMap<K, Readonly<Record<string, unknown>>>();
  return (key) => {
    let item = items.get(key);
    if (item === undefined) {
      item = lastingItem(make(key));
      items.set(key, item);
    }
    return item;
  };
}

const backendItem = itemCache((backend: ModelBackend) => ({
  name: backend.name,
  namespace: backend.namespace,
  service: backend.service,
  service_port: backend.servicePort,
  servers: backend.servers.map((server) => ({ ...server })),
  slots: backend.slots.map((slot) => ({ ...slot })),
  options: optionsItem(backend.options),
  protocol: backend.protocol,
}));

const routeItem = itemCache((route: ModelRoute) => ({
  host: route.host,
  path: route.path,
  path_type: route.pathType,
  exact_key: route.exactKey,
  prefix_key: route.prefixKey,
  backend: route.backend,
  ingress: route.ingress,
  canary: route.canary,
}));

const entryItem = itemCache((entry: MapEntry) => ({ ...entry }));

const ingressItem = itemCache((ingress: ModelIngress) => ({
  namespace: ingress.namespace,
  name: ingress.name,
  annotations: { ...ingress.annotations },
}));

/**
 * A model list's context items. The model keeps a list that did not change as the same array
 * and edits one that did (sorted-reuse.ts), so the items of the last list made are reused at
 * the ends it shares with the next, and only the items between are looked up.
 */
function listItems<K extends object>(
  item: (key: K) => Readonly<Record<string, unknown>>,
): (list: readonly K[]) => readonly Readonly<Record<string, unknown>>[] {
  let last: MappedList<K, Readonly<Record<string, unknown>>> | undefined;
  return (list) => {
    last = mappedReusing(list, last, item);
    return last.items;
  };
}

const routeItems = listItems(routeItem);
const exactItems = listItems(entryItem);
const prefixItems = listItems(entryItem);
const regexItems = listItems(entryItem);
const backendItems = listItems(backendItem);
const ingressItems = listItems(ingressItem);

/** The context's names, each a function of the model (and the class name). */
const contextValues: Readonly<
  Record<string, (model: RoutingModel, ingressClass: string) => unknown>
> = {
  ingress_class: (_, ingressClass) => ingressClass,
  default_certificate: (model) => model.defaultCertificate,
  routes: (model) => routeItems(model.routes),
  exact_map: (model) => exactItems(model.exactMap),
  prefix_map: (model) => prefixItems(model.prefixMap),
  regex_map: (model) => regexItems(model.regexMap),
  canaries: canaryItems,
  backends: (model) => backendItems(model.backends),
  certificates: (model) =>
    model.certificates.map((certificate) => ({
      file: certificate.file,
      secret: certificate.secret,
      hosts: [...certificate.hosts],
    })),
  ingresses: (model) => ingressItems(model.ingresses),
};

/**
 * The context templates see: the routing model in Liquid's snake_case. Its values are never
 * changed after they are made (templates only read them), so an item is made once per model
 * object. With `names` (contextNames), only those: a name no template reads is neither made
 * nor sent to the render process.
 */
export function templateContext(
  model: RoutingModel,
  ingressClass: string,
  names?: ReadonlySet<string>,
): Record<string, unknown> {
  const context: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(contextValues)) {
    if (names === undefined || names.has(name)) context[name] = value(model, ingressClass);
  }
  return context;
}

/** An engine for static analysis only (contextNames); it renders nothing. */
let analysisEngine: Liquid | undefined;
const namesOf = new WeakMap<TemplateConfig, ReadonlySet<string> | undefined>();

/**
 * The context names the templates of `config` can read (Liquid's static analysis of every
 * file), or undefined when that cannot be known (a name computed when rendering, a template
 * that does not parse): then every name is sent, as a template may read any of them.
 */
export function contextNames(config: TemplateConfig): ReadonlySet<string> | undefined {
  if (namesOf.has(config)) return namesOf.get(config);
  let names: Set<string> | undefined = new Set<string>();
  try {
    analysisEngine ??= createTemplateEngine();
    for (const file of config.files) {
      if (computesNames(file.template)) {
        names = undefined;
        break;
      }
      for (const name of analysisEngine.globalVariablesSync(analysisEngine.parse(file.template))) {
        names.add(name);
      }
    }
  } catch {
    // The render process reports the template's own error; here it only means "all names".
    names = undefined;
  }
  namesOf.set(config, names);
  return names;
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
        field: templateField(file),
        message: `HAProxyTemplateConfig ${config.namespace}/${config.name}: ${templateField(file)} does not parse: ${describeError(error)}`,
      };
    }
  }
  return { config, templates };
}

/** The field a file's template came from, as messages name it. */
export function templateField(file: { readonly field: string }): string {
  return `${file.field}.template`;
}

/**
 * Renders every file of the configuration with `context`, all files together within
 * `limitMs` (Liquid's own check, between tags). `onFile` hears which file starts, so whoever
 * enforces the hard limit from outside can name it. With `kept`, a file that would render
 * as it did last time from the same values is that text again (kept-files.ts).
 */
export function renderTemplates(
  engine: Liquid,
  parsed: ParsedTemplates,
  context: Record<string, unknown>,
  options: {
    readonly limitMs?: number;
    readonly onFile?: (field: string) => void;
    readonly kept?: KeptFiles;
  } = {},
): RenderOutcome {
  const files: RenderedFile[] = [];
  const { namespace, name } = parsed.config;
  const end = options.limitMs === undefined ? undefined : performance.now() + options.limitMs;
  for (const template of parsed.templates) {
    const field = templateField(template);
    options.onFile?.(field);
    try {
      const renderOptions =
        end === undefined ? {} : { renderLimit: Math.max(1, end - performance.now()) };
      const reused = options.kept?.reused(template.parsed, context);
      const output: unknown = reused ?? engine.renderSync(template.parsed, context, renderOptions);
      const content = typeof output === 'string' ? output : '';
      if (content.length > maxRenderedFileBytes) {
        return {
          ok: false,
          field,
          message: `HAProxyTemplateConfig ${namespace}/${name}: ${template.path} (${field}) renders to more than ${maxRenderedFileBytes} characters, more than an agent accepts in one file; render less, or split it into maps.`,
        };
      }
      options.kept?.keep(template.parsed, context, content);
      files.push({ path: template.path, content });
    } catch (error) {
      const cause = describeError(error);
      const hint = / limit exceeded/.test(cause)
        ? `${cause.endsWith('.') ? '' : '.'} Ranges and filter results count against Liquid's memory limit, and every tag against its time limit: loop over the model's lists (routes, backends, certificates) instead of large ranges.`
        : '';
      return {
        ok: false,
        field,
        message: `HAProxyTemplateConfig ${namespace}/${name}: rendering ${template.path} (${field}) failed: ${cause}${hint}`,
      };
    }
  }
  return { ok: true, files };
}
