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
    const second = encoder.encode({ backends: [backend] });
    expect(second.definedIds).toEqual([]);
    expect(second.values.backends).toEqual(first.definedIds);
    const one = decode(decoder, first).backends as unknown[];
    const two = decode(decoder, second).backends as unknown[];
    expect(one).toEqual([{ name: 'app_svc_80' }, { name: 'plain' }]);
    expect(two[0]).toBe(one[0]);
    expect(parsedFromText(two[0])).toBe(JSON.stringify(backend));
  });

  it('gives a restarted render process (a new encoder) every text again', () => {
    const backend = lastingItem({ name: 'app_svc_80' });
    const old = new ContextEncoder();
    old.encode({ backends: [backend] });
    const stale = old.encode({ backends: [backend] });
    // The old encoder's ids mean nothing to a new process: refused, never a wrong render.
    expect(new ContextDecoder().decode(stale)).toMatch(/names item id \d+, which it never sent/);
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
    expect(isEncodedContext(of({ a: 1 }))).toBe(false);
    expect(isEncodedContext(of({ a: ['1', 2.5] }))).toBe(false);
    expect(isEncodedContext(of({ a: ['1'] }, [1], []))).toBe(false);
    expect(isEncodedContext(of({}, ['1'], ['{}']))).toBe(false);
    expect(isEncodedContext({ values: {}, definedIds: [], definedTexts: [] })).toBe(false);
    expect(isEncodedContext(['1'])).toBe(false);
    expect(isEncodedContext(null)).toBe(false);
  });
});
