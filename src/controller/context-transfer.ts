/**
 * The template context on its way to the render process, as JSON text: each item of a list
 * (a route, a backend, a certificate, an Ingress) its own text, every other value one text.
 * Structured cloning the context (tens of thousands of small objects at 5,000 Ingresses) took
 * longer than rendering it; strings cross the IPC channel as one copy each.
 *
 * The render process parses an item only when its text is new: the items of the request
 * before are kept by text, so a review with one Ingress changed parses that Ingress's
 * items. Every parsed item is remembered with its text (a WeakMap), which the incremental
 * `for` (template-fragments.ts) takes as the item's key instead of serialising it again.
 * Items are JSON data (templateContext), so parsing a text gives the object the text was made
 * from, and JSON.stringify of it gives the text back. An item object is encoded once (the
 * context's items are never changed after they are made; a backend's item is reused while its
 * Service is unchanged).
 */

/** A context as sent: a JSON text per list item, one JSON text for any other value. */
export type EncodedContext = Readonly<Record<string, string | readonly string[]>>;

/** Texts of list items already encoded: items are values nothing changes once made. */
const itemTexts = new WeakMap<object, string>();

function itemText(item: unknown): string {
  // As in a JSON array, an undefined item is null.
  if (item === undefined) return 'null';
  if (typeof item !== 'object' || item === null) return JSON.stringify(item);
  let text = itemTexts.get(item);
  if (text === undefined) {
    text = JSON.stringify(item);
    itemTexts.set(item, text);
  }
  return text;
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

/** Decodes contexts, reusing the items of the one it decoded before. */
export class ContextDecoder {
  #current = new Map<string, unknown>();
  #previous = new Map<string, unknown>();

  decode(encoded: EncodedContext): Record<string, unknown> {
    this.#previous = this.#current;
    this.#current = new Map();
    const context: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(encoded)) {
      context[name] =
        typeof value === 'string' ? JSON.parse(value) : value.map((text) => this.#item(text));
    }
    return context;
  }

  #item(text: string): unknown {
    const kept = this.#current.get(text) ?? this.#previous.get(text);
    if (kept !== undefined) {
      this.#current.set(text, kept);
      return kept;
    }
    const item: unknown = JSON.parse(text);
    this.#current.set(text, item);
    if (typeof item === 'object' && item !== null) texts.set(item, text);
    return item;
  }
}
