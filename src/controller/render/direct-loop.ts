/**
 * One render of a direct loop (template-fragments.ts): a loop over a variable's list without
 * parameters whose body is reusable, emitted without Liquid's per-item machinery (a scope, a
 * `forloop` object the body does not read, a render of the body list). For every item it does
 * what Liquid's `for` does: check the render time limit, then render the body, which emits the
 * kept text or renders it (the item named once for both). The items the list shares at its
 * ends with the loop's last list are spans of the last text (loop-text.ts), their memory units
 * charged at once; a span that no longer fits is rendered item by item, failing where a full
 * render fails.
 */
import type { Context } from 'liquidjs';
import { type Fragment, type KeptBody, itemKey } from './kept-body.ts';
import { type LoopText, LoopTextBuilder } from './loop-text.ts';
import { sharedEnds } from '../routing/sorted-reuse.ts';

/** Items between the shared ends beyond which a direct loop looks them up in its last text. */
const lastLookupItems = 64;

interface DirectRender {
  readonly ctx: Context;
  readonly body: KeptBody;
  readonly items: readonly unknown[];
  /** The scope the body reads the loop variable from. */
  readonly scope: Record<string, unknown>;
  readonly variable: string;
  readonly last: LoopText | undefined;
  /**
   * Whether an item of the last list between the ends is looked up in the last text: only
   * when many are (indexing the last list costs about as much as rendering 50 items).
   */
  readonly lookUpLast: boolean;
  readonly out: LoopTextBuilder;
}

/** An item's text in the last render's text, its units charged. */
function lastFragment(render: DirectRender, item: unknown): Fragment | undefined {
  const { last, body, ctx } = render;
  const index = render.lookUpLast ? last?.indexOf(item) : undefined;
  const fragment = index === undefined ? undefined : last?.fragment(index);
  return fragment !== undefined && body.charge(ctx, fragment.units) ? fragment : undefined;
}

/**
 * What Liquid's `for` does for each item: check the time limit, then render the body, which
 * emits the kept text or renders it (the item named once for both).
 */
function* renderItems(
  render: DirectRender,
  from: number,
  to: number,
): Generator<unknown, void, unknown> {
  const { ctx, body, items, scope, variable, out } = render;
  for (let index = from; index < to; index += 1) {
    const item = items[index];
    ctx.renderLimit.check(performance.now());
    scope[variable] = item;
    const key = itemKey(item);
    const fragment =
      (key === undefined ? undefined : body.kept(ctx, key)) ??
      lastFragment(render, item) ??
      (yield* body.renderText(ctx, key));
    out.add(fragment.text, fragment.units);
  }
}

/**
 * `count` items from `at` that are the last list's from `lastAt`: a span of the last text, or
 * item by item when its units no longer fit, so the memory limit fails on the item and tag it
 * fails on without the span.
 */
function* sharedItems(
  render: DirectRender,
  at: number,
  lastAt: number,
  count: number,
): Generator<unknown, void, unknown> {
  const { last, ctx } = render;
  if (
    last !== undefined &&
    count > 0 &&
    render.body.charge(ctx, last.unitsOf(lastAt, lastAt + count))
  ) {
    ctx.renderLimit.check(performance.now());
    render.out.addSpan(last, lastAt, lastAt + count);
  } else {
    yield* renderItems(render, at, at + count);
  }
}

/**
 * Renders `items` through `body` (the loop variable `variable`), taking what they share at the
 * ends with `last` from its text; the text and its bookkeeping for the next render.
 */
export function* renderDirectLoop(
  ctx: Context,
  body: KeptBody,
  variable: string,
  items: readonly unknown[],
  last: LoopText | undefined,
): Generator<unknown, LoopTextBuilder, unknown> {
  const { head, tail } = last === undefined ? { head: 0, tail: 0 } : sharedEnds(last.items, items);
  const render: DirectRender = {
    ctx,
    body,
    items,
    scope: Object.create(null) as Record<string, unknown>,
    variable,
    last,
    lookUpLast: items.length - tail - head > lastLookupItems,
    out: new LoopTextBuilder(),
  };
  ctx.push(render.scope);
  body.begin(ctx);
  try {
    yield* sharedItems(render, 0, 0, head);
    yield* renderItems(render, head, items.length - tail);
    yield* sharedItems(render, items.length - tail, (last?.items.length ?? 0) - tail, tail);
  } finally {
    ctx.pop();
  }
  return render.out;
}
