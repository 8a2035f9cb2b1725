/**
 * The files a render process rendered last, each kept with the context it was rendered from:
 * a file whose template's output is a function of the context names it reads
 * (templateInputs) is not rendered again while every one of those names holds the same value
 * as then. The same value is the same object: the process's ContextDecoder gives a value
 * decoded as it was last time as the same object. An admission review that adds a path
 * changes the maps' lists only, so haproxy.cfg, which reads the backends and certificates, is
 * the text it was, without a render or a comparison of its text.
 *
 * Whether a template is such a function is decided once per parsed template, at its second
 * render (the first has nothing to reuse, and a process that renders once, as preflight's,
 * never pays for the analysis). A render that failed is not kept: the next renders again and
 * fails the same way.
 */
import type { Template } from 'liquidjs';
import { templateInputs } from './template-purity.ts';

type Context = Readonly<Record<string, unknown>>;

export class KeptFiles {
  readonly #escapeFilter: string;
  /** The names each template reads, or null when its output may depend on anything else. */
  readonly #inputs = new WeakMap<readonly Template[], readonly string[] | null>();
  readonly #last = new WeakMap<
    readonly Template[],
    { readonly context: Context; readonly content: string }
  >();

  /** `escapeFilter`: the output escape the engine appends to every `{{ output }}`. */
  constructor(escapeFilter: string) {
    this.#escapeFilter = escapeFilter;
  }

  /** The text `templates` rendered last, when rendering them from `context` gives it again. */
  reused(templates: readonly Template[], context: Context): string | undefined {
    const last = this.#last.get(templates);
    if (last === undefined) return undefined;
    let inputs = this.#inputs.get(templates);
    if (inputs === undefined) {
      inputs = templateInputs(templates, this.#escapeFilter) ?? null;
      this.#inputs.set(templates, inputs);
    }
    const same = inputs?.every(
      (name) =>
        Object.hasOwn(context, name) === Object.hasOwn(last.context, name) &&
        context[name] === last.context[name],
    );
    return same === true ? last.content : undefined;
  }

  /** Keeps what `templates` rendered from `context`. */
  keep(templates: readonly Template[], context: Context, content: string): void {
    this.#last.set(templates, { context, content });
  }
}
