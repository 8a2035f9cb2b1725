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
 * while its Service is unchanged; a route's, while its Ingress is) is encoded once, and its
 * text crosses to a render process once: then only its id (ContextEncoder, one per process).
 * A list crosses as an edit of the last one of its name: the items it shares with it at the
 * start and at the end (the same objects) are counted, not sent, so a review whose model
 * differs by an Ingress sends that Ingress's items, not an id per route and backend. A
 * value decoded as it was last time (the same text, or a list of the same items) is the same
 * object as then.
 */

import { sharedEnds } from '../routing/sorted-reuse.ts';

/** A list item as sent: its JSON text, or the id of a lasting item (ContextEncoder). */
export type SentItem = string | number;

/**
 * A list as the edit of the last list of its name sent to the same process: that list's
 * first `head` items, then `items`, then its last `tail` items.
 */
export interface ListEdit {
  readonly head: number;
  readonly tail: number;
  readonly items: readonly SentItem[];
}

/**
 * A context as sent: a JSON text (or a lasting item's id) per list item, the whole list or an
 * edit of the last one of its name, one JSON text for any other value; with the texts of the
 * ids new to the render process and the ids it forgets.
 */
export interface EncodedContext {
  readonly values: Readonly<Record<string, string | readonly SentItem[] | ListEdit>>;
  /** Ids new to the render process, with `definedTexts` at the same index. */
  readonly definedIds: readonly number[];
  readonly definedTexts: readonly string[];
  /** Ids no render will name again: the render process forgets them first. */
  readonly dropped: readonly number[];
}

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

/**
 * Encodes contexts for one render process: a lasting item gets an id, and its text is sent
 * only the first time; ids no render of the last two used are dropped on both sides. A new
 * render process needs a new encoder (it knows no ids).
 */
export class ContextEncoder {
  readonly #ids = new Map<object, { readonly id: number; used: number }>();
  /** The last list sent under each name, as the process holds it. */
  readonly #lists = new Map<string, readonly unknown[]>();
  #nextId = 1;
  #render = 0;

  encode(context: Readonly<Record<string, unknown>>): EncodedContext {
    this.#render += 1;
    const values: Record<string, string | readonly SentItem[] | ListEdit> = {};
    const definedIds: number[] = [];
    const definedTexts: string[] = [];
    const sentItem = (item: unknown): SentItem => {
      const text = typeof item === 'object' && item !== null ? itemTexts.get(item) : undefined;
      if (text === undefined || typeof item !== 'object' || item === null) return itemText(item);
      const kept = this.#ids.get(item);
      if (kept !== undefined) {
        kept.used = this.#render;
        return kept.id;
      }
      const id = this.#nextId++;
      this.#ids.set(item, { id, used: this.#render });
      definedIds.push(id);
      definedTexts.push(text);
      return id;
    };
    for (const [name, value] of Object.entries(context)) {
      // undefined is no JSON text: the name is left out, as Liquid reads a missing name.
      if (value === undefined) continue;
      if (!Array.isArray(value)) {
        values[name] = JSON.stringify(value);
        continue;
      }
      const list: readonly unknown[] = value;
      const last = this.#lists.get(name);
      this.#lists.set(name, list);
      const kept = last === undefined ? { head: 0, tail: 0 } : sharedEnds(last, list);
      values[name] =
        kept.head + kept.tail === 0
          ? list.map(sentItem)
          : { ...kept, items: list.slice(kept.head, list.length - kept.tail).map(sentItem) };
    }
    const dropped: number[] = [];
    for (const [item, kept] of this.#ids) {
      if (kept.used >= this.#render - 1) continue;
      dropped.push(kept.id);
      this.#ids.delete(item);
    }
    return { values, definedIds, definedTexts, dropped };
  }
}

function isSentItems(value: unknown): value is readonly SentItem[] {
  return (
    Array.isArray(value) &&
    value.every((item) => typeof item === 'string' || Number.isSafeInteger(item))
  );
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

function isListEdit(value: unknown): value is ListEdit {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { head, tail, items } = value as Readonly<Record<string, unknown>>;
  return isCount(head) && isCount(tail) && isSentItems(items);
}

function isIdList(value: unknown): value is readonly number[] {
  return Array.isArray(value) && value.every((id) => Number.isSafeInteger(id));
}

/** Whether `value` has the shape of an encoded context (values arrive over IPC unchecked). */
export function isEncodedContext(value: unknown): value is EncodedContext {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const fields = value as Readonly<Record<string, unknown>>;
  const { values, definedTexts } = fields;
  return (
    typeof values === 'object' &&
    values !== null &&
    !Array.isArray(values) &&
    Object.values(values).every(
      (entry) => typeof entry === 'string' || isSentItems(entry) || isListEdit(entry),
    ) &&
    isIdList(fields.definedIds) &&
    Array.isArray(definedTexts) &&
    definedTexts.length === fields.definedIds.length &&
    definedTexts.every((text) => typeof text === 'string') &&
    isIdList(fields.dropped)
  );
}

const texts = new WeakMap<object, string>();

/** The JSON text an object was parsed from by a ContextDecoder; undefined for any other. */
export function parsedFromText(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? texts.get(value) : undefined;
}

/**
 * Decodes contexts, reusing the items of the ones it decoded recently and the lasting items
 * by id. A context naming an id it does not hold (stale or made up) is refused: a sentence.
 */
export class ContextDecoder {
  readonly #items = new Map<string, { readonly item: unknown; used: number }>();
  readonly #byId = new Map<number, unknown>();
  /** The last list decoded under each name, which the next one of that name may edit. */
  readonly #lists = new Map<string, readonly unknown[]>();
  /** The last other value decoded under each name, with its text. */
  readonly #values = new Map<string, { readonly text: string; readonly value: unknown }>();
  #request = 0;

  decode(encoded: EncodedContext): Record<string, unknown> | string {
    this.#request += 1;
    for (const id of encoded.dropped) {
      if (!this.#byId.delete(id)) return `it drops item id ${String(id)}, which it never sent`;
    }
    for (const [index, id] of encoded.definedIds.entries()) {
      if (this.#byId.has(id)) return `it sends item id ${String(id)} a second time`;
      this.#byId.set(id, this.#parsed(encoded.definedTexts[index] ?? 'null'));
    }
    const context: Record<string, unknown> = {};
    let used = 0;
    for (const [name, value] of Object.entries(encoded.values)) {
      if (typeof value === 'string') {
        const last = this.#values.get(name);
        if (last?.text === value) {
          context[name] = last.value;
          continue;
        }
        const parsed: unknown = JSON.parse(value);
        this.#values.set(name, { text: value, value: parsed });
        context[name] = parsed;
        continue;
      }
      const edit = isSentItems(value) ? { head: 0, tail: 0, items: value } : value;
      const kept = this.#lists.get(name);
      const last = kept ?? [];
      if (edit.head + edit.tail > last.length) {
        return `it keeps ${String(edit.head + edit.tail)} items of list ${name}, which holds ${String(last.length)}`;
      }
      const items: unknown[] = last.slice(0, edit.head);
      for (const sent of edit.items) {
        if (typeof sent === 'string') {
          used += 1;
          items.push(this.#item(sent));
          continue;
        }
        if (!this.#byId.has(sent)) return `it names item id ${String(sent)}, which it never sent`;
        items.push(this.#byId.get(sent));
      }
      for (let index = last.length - edit.tail; index < last.length; index += 1) {
        items.push(last[index]);
      }
      // A list of the same items as the last is the last list: a value that did not change
      // stays the same object, which lets a file that reads only such values be kept.
      if (kept?.length === items.length && sharedEnds(kept, items).head === items.length) {
        context[name] = kept;
        continue;
      }
      this.#lists.set(name, items);
      context[name] = items;
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
    const item = this.#parsed(text);
    this.#items.set(text, { item, used: this.#request });
    return item;
  }

  #parsed(text: string): unknown {
    const item: unknown = JSON.parse(text);
    if (typeof item === 'object' && item !== null) texts.set(item, text);
    return item;
  }
}
