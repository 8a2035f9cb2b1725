import { describe, expect, it } from 'vitest';
import {
  ContextDecoder,
  ContextEncoder,
  type EncodedContext,
  isEncodedContext,
  lastingItem,
  parsedFromText,
} from './context-transfer.ts';

/** A context as one render process's first request carries it (every text). */
const encodeContext = (context: Readonly<Record<string, unknown>>) =>
  new ContextEncoder().encode(context);

const route = (path: string): Record<string, unknown> => ({
  host: 'a.example.com',
  path,
  annotations: { '2': 'integer-like key first', z: 'last' },
  backend: { name: 'app_svc_80', weight: 1.5, tags: ['x', null] },
});

function contextOf(paths: readonly string[]): Record<string, unknown> {
  return {
    ingress_class: 'haptic',
    default_certificate: undefined,
    routes: paths.map(route),
    empty: [],
    settings: { timeout: 5 },
  };
}

/** What a decoder makes of a context it accepts (a refusal fails the test). */
function decode(decoder: ContextDecoder, encoded: EncodedContext): Record<string, unknown> {
  const context = decoder.decode(encoded);
  if (typeof context === 'string') throw new Error(context);
  return context;
}

describe('the template context sent to the render process', () => {
  it('arrives as the same JSON data, with undefined names left out', () => {
    const context = contextOf(['/a', '/b']);
    const decoded = decode(new ContextDecoder(), encodeContext(context));
    expect(decoded).toEqual(JSON.parse(JSON.stringify(context)));
    expect('default_certificate' in decoded).toBe(false);
  });

  it('names every parsed item by the text JSON.stringify gives for it', () => {
    const decoded = decode(new ContextDecoder(), encodeContext(contextOf(['/a'])));
    const [item] = decoded.routes as unknown[];
    expect(parsedFromText(item)).toBe(JSON.stringify(item));
    expect(parsedFromText({ host: 'a.example.com' })).toBeUndefined();
    expect(parsedFromText('/a')).toBeUndefined();
  });

  it('parses only the items it has not decoded recently', () => {
    const decoder = new ContextDecoder();
    const first = decode(decoder, encodeContext(contextOf(['/a', '/b']))).routes as unknown[];
    const second = decode(decoder, encodeContext(contextOf(['/b', '/c']))).routes as unknown[];
    expect(second[0]).toBe(first[1]);
    const third = decode(decoder, encodeContext(contextOf(['/c', '/a']))).routes as unknown[];
    expect(third[0]).toBe(second[1]);
    expect(third[1]).toBe(first[0]);
    // Many new items: the old ones are dropped and parsed again when they come back.
    decode(decoder, encodeContext(contextOf(['/d', '/e', '/f', '/g', '/h'])));
    decode(decoder, encodeContext(contextOf(['/m', '/n', '/o', '/p', '/q'])));
    const last = decode(decoder, encodeContext(contextOf(['/i', '/j', '/k', '/l', '/a'])))
      .routes as unknown[];
    expect(last[4]).not.toBe(first[0]);
    expect(last[4]).toEqual(first[0]);
  });

  it('encodes a lasting item once, as JSON.stringify does', () => {
    const backend = lastingItem({ name: 'app_svc_80', servers: [{ address: '10.0.0.1' }] });
    const [text] = encodeContext({ backends: [backend] }).definedTexts;
    expect(text).toBe(JSON.stringify(backend));
  });

  it('encodes an undefined list item as null, as a JSON array does', () => {
    const decoded = decode(new ContextDecoder(), encodeContext({ list: [1, undefined, 'x'] }));
    expect(decoded.list).toEqual([1, null, 'x']);
  });

  it("sends a lasting item's text once, then its id, and the same parsed item comes out", () => {
    const backend = lastingItem({ name: 'app_svc_80' });
    const encoder = new ContextEncoder();
    const decoder = new ContextDecoder();
    const first = encoder.encode({ backends: [backend, { name: 'plain' }] });
    expect(first.definedTexts).toEqual([JSON.stringify(backend)]);
    const second = encoder.encode({ backends: [{ name: 'other' }, backend] });
    expect(second.definedIds).toEqual([]);
    expect(second.values.backends).toEqual([
      JSON.stringify({ name: 'other' }),
      ...first.definedIds,
    ]);
    const one = decode(decoder, first).backends as unknown[];
    const two = decode(decoder, second).backends as unknown[];
    expect(one).toEqual([{ name: 'app_svc_80' }, { name: 'plain' }]);
    expect(two[1]).toBe(one[0]);
    expect(parsedFromText(two[1])).toBe(JSON.stringify(backend));
  });

  it('gives a restarted render process (a new encoder) every text again', () => {
    const backend = lastingItem({ name: 'app_svc_80' });
    const old = new ContextEncoder();
    old.encode({ backends: [backend] });
    const stale = old.encode({ others: [backend] });
    // The old encoder's ids and lists mean nothing to a new process: refused, never a wrong
    // render.
    expect(new ContextDecoder().decode(stale)).toMatch(/names item id \d+, which it never sent/);
    expect(new ContextDecoder().decode(old.encode({ others: [backend] }))).toMatch(
      /keeps 1 items of list others, which holds 0/,
    );
    const fresh = new ContextEncoder().encode({ backends: [backend] });
    expect(fresh.definedTexts).toEqual([JSON.stringify(backend)]);
    expect(decode(new ContextDecoder(), fresh).backends).toEqual([{ name: 'app_svc_80' }]);
  });

  it('refuses an id defined twice, a drop of an unknown id and an id it never got', () => {
    const decoder = new ContextDecoder();
    const define: EncodedContext = {
      values: { list: [7] },
      definedIds: [7],
      definedTexts: ['{"a":1}'],
      dropped: [],
    };
    expect(decode(decoder, define).list).toEqual([{ a: 1 }]);
    expect(decoder.decode(define)).toMatch(/sends item id 7 a second time/);
    expect(new ContextDecoder().decode({ ...define, dropped: [3] })).toMatch(
      /drops item id 3, which it never sent/,
    );
    expect(
      new ContextDecoder().decode({
        values: { list: [8] },
        definedIds: [],
        definedTexts: [],
        dropped: [],
      }),
    ).toMatch(/names item id 8/);
  });

  it('drops on both sides the ids no render of the last two used', () => {
    const encoder = new ContextEncoder();
    const decoder = new ContextDecoder();
    const items = Array.from({ length: 30 }, (_, index) => lastingItem({ index }));
    let defined = 0;
    for (let render = 0; render < 10; render += 1) {
      const encoded = encoder.encode({ list: items.slice(render * 3, render * 3 + 3) });
      defined += encoded.definedIds.length;
      if (render >= 2) expect(encoded.dropped).toHaveLength(3);
      decode(decoder, encoded);
      // The process holds the ids of the last two renders only: older ones are refused.
      if (render >= 2) {
        const [gone] = encoded.dropped;
        expect(
          decoder.decode({
            values: { list: [gone ?? 0] },
            definedIds: [],
            definedTexts: [],
            dropped: [],
          }),
        ).toMatch(/which it never sent/);
      }
    }
    expect(defined).toBe(30);
    // An item back after its id was dropped is sent whole again, with a new id.
    const back = encoder.encode({ list: [items[0]] });
    expect(back.definedTexts).toEqual([JSON.stringify(items[0])]);
    expect(decode(decoder, back).list).toEqual([{ index: 0 }]);
  });

  it('sends a list as an edit of the last one: only the items between the shared ends', () => {
    const items = Array.from({ length: 6 }, (_, index) => lastingItem({ index }));
    const encoder = new ContextEncoder();
    const decoder = new ContextDecoder();
    const lists: unknown[][] = [
      items.slice(0, 5),
      [...items.slice(0, 2), { added: true }, ...items.slice(2, 5)],
      [...items.slice(0, 2), { added: true }, ...items.slice(2, 5)],
      [...items.slice(1, 3), items[5], ...items.slice(3, 4)],
      [],
      [items[0]],
    ];
    const sent = lists.map((list) => encoder.encode({ list, other: list.slice(0, 1) }));
    // An inserted item: the two before it and the three after it are counted, not sent.
    expect(sent[1]?.values.list).toEqual({ head: 2, tail: 3, items: ['{"added":true}'] });
    // An object made again is another item, even with the same text: sent again.
    expect(sent[2]?.values.list).toEqual({ head: 2, tail: 3, items: ['{"added":true}'] });
    // Nothing shared at either end: the whole list, as ids of the items the process holds.
    expect(Array.isArray(sent[3]?.values.list)).toBe(true);
    for (const [index, encoded] of sent.entries()) {
      const decoded = decode(decoder, encoded);
      // The same data as the list encoded whole, for a process that never saw the others.
      expect(decoded.list).toEqual(JSON.parse(JSON.stringify(lists[index])));
      expect(decoded.other).toEqual(JSON.parse(JSON.stringify(lists[index]?.slice(0, 1))));
    }
  });

  it('gives a value decoded as it was last time as the same object', () => {
    const backend = lastingItem({ name: 'app_svc_80' });
    const encoder = new ContextEncoder();
    const decoder = new ContextDecoder();
    const contexts = [
      { backends: [backend], settings: { timeout: 5 }, routes: [route('/a')] },
      // The same list (an edit keeping every item), the same text, a route made again.
      { backends: [backend], settings: { timeout: 5 }, routes: [route('/a')] },
      { backends: [backend, lastingItem({ name: 'b' })], settings: { timeout: 6 }, routes: [] },
    ];
    const [first, second, third] = contexts.map((context) =>
      decode(decoder, encoder.encode(context)),
    );
    expect(second?.backends).toBe(first?.backends);
    expect(second?.settings).toBe(first?.settings);
    // Sent whole again, its text parsed to the same item: the same list.
    expect(second?.routes).toBe(first?.routes);
    expect(third?.backends).not.toBe(second?.backends);
    // A list first seen empty stays the same empty list.
    const empty = decode(decoder, encoder.encode({ none: [] })).none;
    expect(decode(decoder, encoder.encode({ none: [] })).none).toBe(empty);
    expect(third?.settings).toEqual({ timeout: 6 });
    expect(third?.routes).toEqual([]);
  });

  it('refuses an edit of a list it does not hold, or keeping more items than it holds', () => {
    const edit = (head: number, tail: number): EncodedContext => ({
      values: { list: { head, tail, items: [] } },
      definedIds: [],
      definedTexts: [],
      dropped: [],
    });
    expect(new ContextDecoder().decode(edit(1, 0))).toMatch(
      /keeps 1 items of list list, which holds 0/,
    );
    const decoder = new ContextDecoder();
    decode(decoder, { ...edit(0, 0), values: { list: ['1', '2'] } });
    expect(decode(decoder, edit(1, 1)).list).toEqual([1, 2]);
    expect(decoder.decode(edit(2, 1))).toMatch(/keeps 3 items of list list, which holds 2/);
  });

  it('refuses anything but texts, ids and the lists of ids and texts', () => {
    const of = (
      values: unknown,
      definedIds: unknown = [],
      definedTexts: unknown = [],
    ): unknown => ({
      values,
      definedIds,
      definedTexts,
      dropped: [],
    });
    expect(isEncodedContext(of({ a: '1', b: ['2', '"x"', 3] }, [3], ['{}']))).toBe(true);
    expect(isEncodedContext(of({ a: { head: 1, tail: 0, items: ['1', 2] } }))).toBe(true);
    expect(isEncodedContext(of({ a: { head: -1, tail: 0, items: [] } }))).toBe(false);
    expect(isEncodedContext(of({ a: { head: 0, tail: 0.5, items: [] } }))).toBe(false);
    expect(isEncodedContext(of({ a: { head: 0, tail: 0, items: [null] } }))).toBe(false);
    expect(isEncodedContext(of({ a: { head: 0, tail: 0 } }))).toBe(false);
    expect(isEncodedContext(of({ a: 1 }))).toBe(false);
    expect(isEncodedContext(of({ a: ['1', 2.5] }))).toBe(false);
    expect(isEncodedContext(of({ a: ['1'] }, [1], []))).toBe(false);
    expect(isEncodedContext(of({}, ['1'], ['{}']))).toBe(false);
    expect(isEncodedContext({ values: {}, definedIds: [], definedTexts: [] })).toBe(false);
    expect(isEncodedContext(['1'])).toBe(false);
    expect(isEncodedContext(null)).toBe(false);
  });
});
