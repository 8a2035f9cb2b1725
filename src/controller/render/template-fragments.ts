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
  type TagToken,
  type Parser,
  type TopLevelToken,
  TypeGuards,
  evalToken,
} from 'liquidjs';
import { renderDirectLoop } from './direct-loop.ts';
import { KeptBody } from './kept-body.ts';
import type { LoopText } from './loop-text.ts';
import { bodyIsPure } from './template-purity.ts';

/**
 * The `for` tag with reusable bodies (template-purity.ts: bodyIsPure; kept-body.ts);
 * registered in place of Liquid's own. A loop over a variable's list without parameters (no
 * `limit`, `offset`, `reversed`) whose body is reusable is emitted directly (direct-loop.ts),
 * and keeps the text it emitted last (loop-text.ts) for its next render. It sets the
 * `offset: continue` register as Liquid's `for` does. Any other loop is Liquid's own.
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
      const out = yield* renderDirectLoop(ctx, body, this.variable, items, last);
      emitter.write(out.text);
      this.#lastText = out.done(items);
      ctx.continueCalled = ctx.breakCalled = false;
    }
  };
}
