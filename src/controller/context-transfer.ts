/**
 * The template context on its way to the render process, as JSON text: each item of a list
 * (a route, a backend, a certificate, an Ingress) its own text, every other value one text.
 * Structured cloning the context (tens of thousands of small objects at 5,000 Ingresses) took
 * longer than rendering it; strings cross the IPC channel as one copy each.
 *
 * The render process parses an item only when its text is new: the items of recent
 * requests are kept by text (at most twice as many as one request sends), so a review with one Ingress changed parses that Ingress's
 * items. Every parsed item is remembered with its text (a WeakMap), which the incremental
 * `for` (template-fragments.ts) takes as the item's key instead of serialising it again.
 * Items are JSON data (templateContext), so parsing a text gives the object the text was made
 * from, and JSON.stringify of it gives the text back. A lasting item (a backend's, reused
 * while its Service is unchanged) is encoded once.
 */

/** A context as sent: a JSON text per list item, one JSON text for any other value. */
export type EncodedContext = Readonly<Record<string, string | readonly string[]>>;

/** Texts of lasting items (lastingItem), made once. */
const itemTexts = new WeakMap<object, string>();

/**
 * Marks a context item that is reused across renders (a backend while its Service is
 * unchanged): its JSON text is made now, once. Nothing changes an item once it is made.
 */
export function lastingItem<T extends object>(item: T): T {
  itemTexts.set(item, JSON.stringify(item));
  return item;
}

function itemText(item: unknown): string {
  // As in a JSON array, an undefined item is null.
  if (item === undefined) return 'null';
  return (
    (typeof item === 'object' && item !== null ? itemTexts.get(item) : undefined) ??
    JSON.stringify(item)
  );
}

export function encodeContext(context: Readonly<Record<string, unknown>>): EncodedContext {
  const encoded: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(context)) {
    // undefined is no JSON text: the name is left out, as Liquid reads a missing name.
    if (value === undefined) continue;
    encoded[name] = Array.isArray(value) ? value.map(itemText) : JSON.stringify(value);
  }
  return encoded;
}

/** Whether `value` has the shape of an encoded context (values arrive over IPC unchecked). */
export function isEncodedContext(value: unknown): value is EncodedContext {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every(
    (entry) =>
      typeof entry === 'string' ||
      (Array.isArray(entry) && entry.every((item) => typeof item === 'string')),
  );
}

const texts = new WeakMap<object, string>();

/** The JSON text an object was parsed from by a ContextDecoder; undefined for any other. */
export function parsedFromText(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? texts.get(value) : undefined;
}

/** Decodes contexts, reusing the items of the ones it decoded recently. */
export class ContextDecoder {
  readonly #items = new Map<string, { readonly item: unknown; used: number }>();
  #request = 0;

  decode(encoded: EncodedContext): Record<string, unknown> {
    this.#request += 1;
    const context: Record<string, unknown> = {};
    let used = 0;
    for (const [name, value] of Object.entries(encoded)) {
      if (typeof value === 'string') {
        context[name] = JSON.parse(value);
        continue;
      }
      used += value.length;
      context[name] = value.map((text) => this.#item(text));
    }
    // Items of older requests go once they outnumber the ones in use.
    if (this.#items.size > 2 * used) {
      for (const [text, kept] of this.#items) {
        if (kept.used < this.#request - 1) this.#items.delete(text);
      }
    }
    return context;
  }

  #item(text: string): unknown {
    const kept = this.#items.get(text);
    if (kept !== undefined) {
      kept.used = this.#request;
      return kept.item;
    }
    const item: unknown = JSON.parse(text);
    this.#items.set(text, { item, used: this.#request });
    if (typeof item === 'object' && item !== null) texts.set(item, text);
    return item;
  }
}
