/**
 * The body of a reusable loop (template-fragments.ts) and the text it rendered for each item:
 * an item it has seen, named by its JSON text, is that text again, its memory units charged
 * as a render of it would charge them.
 */
import type { Context, Emitter, Liquid, TagToken, Template } from 'liquidjs';
import { parsedFromText } from './context-transfer.ts';

/** The text a body rendered for one item. */
export interface Fragment {
  readonly text: string;
  /** Memory units (Liquid's memoryLimit) rendering it used. */
  readonly units: number;
}

/** The JSON text naming an item, or undefined for a value that is not JSON data. */
export function itemKey(item: unknown): string | undefined {
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
export class KeptBody implements Template {
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
