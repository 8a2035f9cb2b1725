import { describe, expect, it } from 'vitest';
import {
  ContextDecoder,
  encodeContext,
  isEncodedContext,
  lastingItem,
  parsedFromText,
} from './context-transfer.ts';

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

describe('the template context sent to the render process', () => {
  it('arrives as the same JSON data, with undefined names left out', () => {
    const context = contextOf(['/a', '/b']);
    const decoded = new ContextDecoder().decode(encodeContext(context));
    expect(decoded).toEqual(JSON.parse(JSON.stringify(context)));
    expect('default_certificate' in decoded).toBe(false);
  });

  it('names every parsed item by the text JSON.stringify gives for it', () => {
    const decoded = new ContextDecoder().decode(encodeContext(contextOf(['/a'])));
    const [item] = decoded.routes as unknown[];
    expect(parsedFromText(item)).toBe(JSON.stringify(item));
    expect(parsedFromText({ host: 'a.example.com' })).toBeUndefined();
    expect(parsedFromText('/a')).toBeUndefined();
  });

  it('parses only the items it has not decoded recently', () => {
    const decoder = new ContextDecoder();
    const first = decoder.decode(encodeContext(contextOf(['/a', '/b']))).routes as unknown[];
    const second = decoder.decode(encodeContext(contextOf(['/b', '/c']))).routes as unknown[];
    expect(second[0]).toBe(first[1]);
    const third = decoder.decode(encodeContext(contextOf(['/c', '/a']))).routes as unknown[];
    expect(third[0]).toBe(second[1]);
    expect(third[1]).toBe(first[0]);
    // Many new items: the old ones are dropped and parsed again when they come back.
    decoder.decode(encodeContext(contextOf(['/d', '/e', '/f', '/g', '/h'])));
    decoder.decode(encodeContext(contextOf(['/m', '/n', '/o', '/p', '/q'])));
    const last = decoder.decode(encodeContext(contextOf(['/i', '/j', '/k', '/l', '/a'])))
      .routes as unknown[];
    expect(last[4]).not.toBe(first[0]);
    expect(last[4]).toEqual(first[0]);
  });

  it('encodes a lasting item once, as JSON.stringify does', () => {
    const backend = lastingItem({ name: 'app_svc_80', servers: [{ address: '10.0.0.1' }] });
    const [text] = encodeContext({ backends: [backend] }).backends ?? [];
    expect(text).toBe(JSON.stringify(backend));
  });

  it('encodes an undefined list item as null, as a JSON array does', () => {
    const decoded = new ContextDecoder().decode(encodeContext({ list: [1, undefined, 'x'] }));
    expect(decoded.list).toEqual([1, null, 'x']);
  });

  it('refuses anything but texts and lists of texts', () => {
    expect(isEncodedContext({ a: '1', b: ['2', '"x"'] })).toBe(true);
    expect(isEncodedContext({ a: 1 })).toBe(false);
    expect(isEncodedContext({ a: ['1', 2] })).toBe(false);
    expect(isEncodedContext(['1'])).toBe(false);
    expect(isEncodedContext(null)).toBe(false);
  });
});
