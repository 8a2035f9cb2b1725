/**
 * Incremental rendering: the `for` tag of the template engine keeps what its body rendered
 * for each item, and emits it again for an item it has seen, when the body's output can
 * depend on nothing but the item. Rendering the current state and then that state with one
 * Ingress changed renders the loop bodies of the changed routes, backends and certificates
 * only; every other iteration is a string looked up by the item's JSON text.
 *
 * A body is reused only when its output is a function of the item alone (checked once, at
 * the loop's first render, or, for a loop over a variable's list without parameters, at its
 * first render with items): the only variable it reads from outside is the loop variable
 * (Liquid's static analysis, so its file names no variable it computes when rendering,
 * `[name]`, which the analysis cannot follow), it assigns nothing, it contains only the tags listed below
 * (no `break`, `continue`, `cycle`, `increment`, `assign`, `capture`, partials), nested
 * loops have no `offset` (`offset: continue` reads a register of the render), and every
 * filter is one whose result depends on its input and arguments only (no dates, which read
 * the clock, no `sample`, no `*_exp` filters, which evaluate strings as expressions). Any
 * other body renders every time, as Liquid's own `for` does.
 *
 * The result is the same text, and the same failure, as rendering every item:
 * - a body that fails is not kept, so an item renders again and fails the same way;
 * - the memory units a body used (Liquid's `memoryLimit`: ranges and filter allocations)
 *   are charged again when its text is reused; when they would exceed the limit, the body
 *   is rendered instead, so the limit error names the same tag and position;
 * - the render time limit is checked before every item, as Liquid does between templates
 *   (reused items are faster, so a render close to the time limit may pass where a full
 *   render would be stopped: time was never a deterministic verdict).
 * Items are JSON data (the template context, templateContext), so their JSON text names them
 * (the text the render process parsed them from, when it did: context-transfer.ts).
 * What is kept is bounded: the fragments of the last two renders of each loop, and older ones
 * only until they outnumber those of the last render twice.
 */
import {
  type Context,
  type Emitter,
  ForTag,
  type Liquid,
  Output,
  Tag,
  type TagToken,
  type Template,
  type Parser,
  type TopLevelToken,
  TypeGuards,
  Value,
  analyzeSync,
  evalToken,
} from 'liquidjs';
import { parsedFromText } from './context-transfer.ts';
import { LoopText, LoopTextBuilder } from './loop-text.ts';
import { sharedEnds } from '../routing/sorted-reuse.ts';

/** Items between the shared ends beyond which a direct loop looks them up in its last text. */
const lastLookupItems = 64;

/**
 * A `[` that starts a variable's name (`{{ [name] }}`, `{% for x in [name] %}`) rather than
 * indexing one (`list[0]`, `map[key]`): the name is computed when rendering, so no static
 * analysis knows it. Matched in the text of Liquid's tags and outputs; a match inside a
 * string literal only makes the answer more cautious.
 */
const computedRoot = /(?:^|[^\w\])])\[/;
const liquidMarkup = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g;

/**
 * Whether a template names a variable it computes when rendering (`[name]`): what it reads
 * then depends on values, so neither its names nor its output follow from its text.
 */
export function computesNames(source: string): boolean {
  const markup = source.match(liquidMarkup) ?? [];
  return markup.some((text) => computedRoot.test(text.slice(2, -2)));
}

/** Tags a reusable body may contain: none of them reads or writes state of the render. */
const pureTags = new Set(['if', 'unless', 'case', 'for', 'comment', 'raw', 'echo', '#']);

/** Filters whose result is a function of their input and arguments. */
const pureFilters = new Set([
  ...['escape', 'xml_escape', 'escape_once', 'newline_to_br', 'strip_html'],
  ...['abs', 'at_least', 'at_most', 'ceil', 'divided_by', 'floor', 'minus', 'plus'],
  ...['modulo', 'times', 'round', 'url_decode', 'url_encode', 'cgi_escape', 'uri_escape'],
  ...['slugify', 'join', 'last', 'first', 'reverse', 'sort', 'sort_natural', 'size', 'map'],
  ...['sum', 'compact', 'concat', 'slice', 'where', 'reject', 'has', 'find_index', 'find'],
  ...['uniq', 'group_by', 'append', 'prepend', 'lstrip', 'downcase', 'upcase', 'remove'],
  ...['remove_first', 'remove_last', 'rstrip', 'split', 'strip', 'strip_newlines', 'squish'],
  ...['capitalize', 'replace', 'replace_first', 'replace_last', 'truncate', 'truncatewords'],
  ...['normalize_whitespace', 'number_of_words', 'array_to_sentence_string'],
  ...['base64_encode', 'base64_decode', 'sha256', 'hmac_sha256', 'default', 'raw'],
  ...['jsonify', 'to_integer', 'json', 'inspect'],
]);

function filtersArePure(value: Value, escapeFilter: string): boolean {
  return value.filters.every(
    (filter) => pureFilters.has(filter.name) || filter.name === escapeFilter,
  );
}

/** Whether `templates` (and everything nested) uses only pure tags and filters. */
function onlyPureParts(templates: readonly Template[], escapeFilter: string): boolean {
  for (const template of templates) {
    if (template instanceof Output) {
      if (!filtersArePure(template.value, escapeFilter)) return false;
      continue;
    }
    if (!(template instanceof Tag)) continue; // literal text
    if (!pureTags.has(template.name)) return false;
    if (template instanceof ForTag && 'offset' in template.hash.hash) return false;
    const node: Template = template;
    for (const argument of node.arguments?.() ?? []) {
      if (argument instanceof Value && !filtersArePure(argument, escapeFilter)) return false;
    }
    const children = node.children?.(false, true).next();
    if (children?.done === true && !onlyPureParts(children.value, escapeFilter)) return false;
    if (children?.done === false) return false;
  }
  return true;
}

/** Whether the file `templates` come from computes a name anywhere (computesNames). */
function inFileComputingNames(templates: readonly Template[]): boolean {
  const [first] = templates;
  return first !== undefined && computesNames(first.token.input);
}

/** Whether a loop body's output depends on the loop variable alone. */
export function bodyIsPure(
  templates: readonly Template[],
  variable: string,
  escapeFilter: string,
): boolean {
  if (inFileComputingNames(templates) || !onlyPureParts(templates, escapeFilter)) return false;
  const analysis = analyzeSync([...templates], { partials: false });
  return (
    Object.keys(analysis.locals).length === 0 &&
    Object.keys(analysis.globals).every((name) => name === variable)
  );
}

/**
 * The names a whole template reads from its context when its output is a function of their
 * values alone (the same parts as a reusable loop body, nothing assigned, no name computed
 * when rendering); undefined when it may depend on anything else. Loop bodies already wrapped
 * for reuse (KeptBody) were judged pure when they were wrapped.
 */
export function templateInputs(
  templates: readonly Template[],
  escapeFilter: string,
): readonly string[] | undefined {
  if (inFileComputingNames(templates) || !onlyPureParts(templates, escapeFilter)) return undefined;
  const analysis = analyzeSync([...templates], { partials: false });
  return Object.keys(analysis.locals).length === 0 ? Object.keys(analysis.globals) : undefined;
}

interface Fragment {
  readonly text: string;
  /** Memory units (Liquid's memoryLimit) rendering it used. */
  readonly units: number;
}

/** The JSON text naming an item, or undefined for a value that is not JSON data. */
function itemKey(item: unknown): string | undefined {
  try {
    // An item the render process parsed from its text (context-transfer.ts) is named by it.
    const text: unknown = parsedFromText(item) ?? JSON.stringify(item);
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

/** The loop variable's value in scope, as the body reads it; undefined when it cannot be read. */
function itemInScope(ctx: Context, variable: string): unknown {
  try {
    return ctx.getSync([variable]);
  } catch {
    return undefined;
  }
}

/**
 * The body of a reusable loop as one template: renders the original body for an item whose
 * text it does not keep, emits the kept text otherwise. A kept text is one lookup: each
 * fragment records the last render that used it, and the ones no render of the last two used
 * are dropped once they outnumber those the last render used twice.
 */
class KeptBody implements Template {
  readonly token: TagToken;
  readonly #templates: Template[];
  readonly #variable: string;
  readonly #liquid: Liquid;
  readonly #renders = new WeakSet<Context>();
  readonly #fragments = new Map<string, Fragment & { used: number }>();
  /** This render's number, and how many fragments it and the one before used. */
  #render = 0;
  #used = 0;
  #usedBefore = 0;

  constructor(token: TagToken, templates: Template[], variable: string, liquid: Liquid) {
    this.token = token;
    this.#templates = templates;
    this.#variable = variable;
    this.#liquid = liquid;
  }

  /** Begins this render's bookkeeping at its first use in `ctx`'s render. */
  begin(ctx: Context): void {
    if (this.#renders.has(ctx)) return;
    this.#renders.add(ctx);
    this.#render += 1;
    this.#usedBefore = this.#used;
    this.#used = 0;
    if (this.#fragments.size <= 2 * this.#usedBefore) return;
    for (const [key, fragment] of this.#fragments) {
      if (fragment.used < this.#render - 1) this.#fragments.delete(key);
    }
  }

  /**
   * The fragment kept under `key`, its memory units charged; undefined (nothing charged) when
   * none is kept or its units exceed the limit: then `renderText` renders it (and fails there).
   */
  kept(ctx: Context, key: string): Fragment | undefined {
    const kept = this.#fragments.get(key);
    if (kept === undefined || !this.charge(ctx, kept.units)) return undefined;
    if (kept.used !== this.#render) {
      kept.used = this.#render;
      this.#used += 1;
    }
    return kept;
  }

  /** Renders the body for the item in scope, keeping its text under `key` (when it has one). */
  *renderText(ctx: Context, key: string | undefined): Generator<unknown, Fragment, unknown> {
    const limiter = ctx.memoryLimit;
    let units = 0;
    ctx.memoryLimit = new Proxy(limiter, {
      get: (target, property, receiver): unknown =>
        property === 'use'
          ? (count: number): void => {
              target.use(count);
              if (count > 0) units += count;
            }
          : Reflect.get(target, property, receiver),
    });
    let output: unknown;
    try {
      // Without an emitter, Liquid renders into a string as renderSync does.
      output = yield this.#liquid.renderer.renderTemplates(this.#templates, ctx);
    } finally {
      ctx.memoryLimit = limiter;
    }
    const text = typeof output === 'string' ? output : '';
    if (key !== undefined) {
      this.#fragments.set(key, { text, units, used: this.#render });
      this.#used += 1;
    }
    return { text, units };
  }

  /** As Liquid renders a body: the item read from the scope, its kept text or a fresh render. */
  *render(ctx: Context, emitter: Emitter): Generator<unknown, void, unknown> {
    this.begin(ctx);
    const key = itemKey(itemInScope(ctx, this.#variable));
    const fragment =
      (key === undefined ? undefined : this.kept(ctx, key)) ?? (yield* this.renderText(ctx, key));
    emitter.write(fragment.text);
  }

  /** Charges memory units of kept text; false (nothing charged) when over the limit. */
  charge(ctx: Context, units: number): boolean {
    if (units <= 0) return true;
    try {
      ctx.memoryLimit.use(units);
      return true;
    } catch {
      return false;
    }
  }

  *children(): Generator<unknown, Template[]> {
    yield* [];
    return this.#templates;
  }
}

/**
 * The `for` tag with reusable bodies; registered in place of Liquid's own. A loop over a
 * variable's list without parameters (no `limit`, `offset`, `reversed`) whose body is
 * reusable emits each kept item's text directly, without Liquid's per-item machinery (a
 * scope, a `forloop` object the body does not read, a render of the body list); what it
 * does for every item is what Liquid's `for` does: check the render time limit, then
 * render the body, which emits the kept text or renders it (the item named once for both).
 * Such a loop also keeps the text it emitted last (loop-text.ts): the items its next list
 * shares at the ends with the last are that text's spans, their memory units charged at once
 * (a span that no longer fits is rendered item by item, failing where a full render fails).
 * It sets the `offset: continue` register as Liquid's `for` does. Any other loop is Liquid's
 * own.
 */
export function reusingForTag(escapeFilter: string): typeof ForTag {
  return class ReusingForTag extends ForTag {
    readonly #token: TagToken;
    readonly #liquid: Liquid;
    /** A loop over a variable's list without parameters: the one emitted directly. */
    readonly #directCandidate: boolean;
    /**
     * Whether the body is reusable is decided at render, not at parse: the analysis takes
     * about 10 ms per configuration in a fresh process, and a loop over a variable's list
     * without parameters decides only when it has items (the pre-rollout Job's lint, with no
     * Ingresses, never does); any other loop decides at its first render. Undefined until then.
     */
    #decided: { readonly direct: KeptBody | undefined } | undefined;
    /** What this loop emitted directly in its last render (loop-text.ts). */
    #lastText: LoopText | undefined;

    constructor(token: TagToken, remainTokens: TopLevelToken[], liquid: Liquid, parser: Parser) {
      super(token, remainTokens, liquid, parser);
      this.#token = token;
      this.#liquid = liquid;
      this.#directCandidate =
        TypeGuards.isPropertyAccessToken(this.collection) &&
        Object.keys(this.hash.hash).length === 0;
    }

    /** The kept body this loop emits directly, if any; the body wrapped when reusable. */
    #decide(): KeptBody | undefined {
      if (this.#decided !== undefined) return this.#decided.direct;
      let direct: KeptBody | undefined;
      if (this.templates.length > 0 && bodyIsPure(this.templates, this.variable, escapeFilter)) {
        const body = new KeptBody(this.#token, this.templates, this.variable, this.#liquid);
        this.templates = [body];
        if (this.#directCandidate) direct = body;
      }
      this.#decided = { direct };
      return direct;
    }

    override *render(ctx: Context, emitter: Emitter): Generator<unknown, void, unknown> {
      if (!this.#directCandidate) {
        this.#decide();
        yield super.render(ctx, emitter);
        return;
      }
      // A variable's value: reading it again (Liquid's own loop, below) changes nothing.
      const collection: unknown =
        this.#decided !== undefined && this.#decided.direct === undefined
          ? []
          : yield evalToken(this.collection, ctx);
      const body = Array.isArray(collection) && collection.length > 0 ? this.#decide() : undefined;
      if (body === undefined || !Array.isArray(collection)) {
        yield super.render(ctx, emitter);
        return;
      }
      const items: readonly unknown[] = collection;
      ctx.setRegister(`continue-${this.variable}-${this.collection.getText()}`, items.length);
      // A render that fails keeps no text: the next renders every item again.
      const last = this.#lastText;
      this.#lastText = undefined;
      const { head, tail } =
        last === undefined ? { head: 0, tail: 0 } : sharedEnds(last.items, items);
      const out = new LoopTextBuilder();
      const scope: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      ctx.push(scope);
      body.begin(ctx);
      const variable = this.variable;
      // An item of the last list between the ends is looked up in the last text only when
      // many are (indexing the last list costs about as much as rendering 50 items).
      const lookUpLast = items.length - tail - head > lastLookupItems;
      /** An item's text in the last render's text, its units charged. */
      const lastFragment = (item: unknown): Fragment | undefined => {
        const index = lookUpLast ? last?.indexOf(item) : undefined;
        const fragment = index === undefined ? undefined : last?.fragment(index);
        return fragment !== undefined && body.charge(ctx, fragment.units) ? fragment : undefined;
      };
      // What Liquid's `for` does for each item: check the time limit, then render the body,
      // which emits the kept text or renders it (the item named once for both).
      const renderItems = function* (from: number, to: number): Generator<unknown, void, unknown> {
        for (let index = from; index < to; index += 1) {
          const item = items[index];
          ctx.renderLimit.check(performance.now());
          scope[variable] = item;
          const key = itemKey(item);
          const fragment =
            (key === undefined ? undefined : body.kept(ctx, key)) ??
            lastFragment(item) ??
            (yield* body.renderText(ctx, key));
          out.add(fragment.text, fragment.units);
        }
      };
      /**
       * `count` items from `at` that are the last list's from `lastAt`: a span of the last
       * text, or item by item when its units no longer fit, so the memory limit fails on the
       * item and tag it fails on without the span.
       */
      const sharedItems = function* (
        at: number,
        lastAt: number,
        count: number,
      ): Generator<unknown, void, unknown> {
        if (
          last !== undefined &&
          count > 0 &&
          body.charge(ctx, last.unitsOf(lastAt, lastAt + count))
        ) {
          ctx.renderLimit.check(performance.now());
          out.addSpan(last, lastAt, lastAt + count);
        } else {
          yield* renderItems(at, at + count);
        }
      };
      try {
        yield* sharedItems(0, 0, head);
        yield* renderItems(head, items.length - tail);
        yield* sharedItems(items.length - tail, (last?.items.length ?? 0) - tail, tail);
      } finally {
        ctx.pop();
      }
      emitter.write(out.text);
      this.#lastText = out.done(items);
      ctx.continueCalled = ctx.breakCalled = false;
    }
  };
}
