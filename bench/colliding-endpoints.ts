/**
 * Endpoints whose hashes all collide on purpose: `count` IPv4 endpoints on port 80 whose
 * `address:port` takes slot index 7 of 8,192 (FNV-1a as server-slots.ts hashes, continued from
 * each address prefix's state), sorted. The worst case of the slots' probing, for the unit test
 * that places them and for bench/server-slots.ts that times it.
 */
import type { ModelServer } from '../src/controller/routing/model-types.ts';

function fnv1a(state: number, text: string): number {
  let value = state;
  for (let i = 0; i < text.length; i += 1) {
    value ^= text.charCodeAt(i);
    value = Math.imul(value, 0x01000193) >>> 0;
  }
  return value;
}

export function collidingEndpoints(count: number): ModelServer[] {
  const colliding: ModelServer[] = [];
  search: for (const first of ['10', '11', '12']) {
    for (let b = 0; b < 256; b += 1) {
      for (let c = 0; c < 256; c += 1) {
        const prefix = `${first}.${String(b)}.${String(c)}.`;
        const state = fnv1a(0x811c9dc5, prefix);
        for (let d = 0; d < 256; d += 1) {
          if (fnv1a(state, `${String(d)}:80`) % 8192 !== 7) continue;
          const address = `${prefix}${String(d)}`;
          colliding.push({ name: '', address, port: 80, endpoint: `${address}:80` });
          if (colliding.length === count) break search;
        }
      }
    }
  }
  return colliding.sort((a, b) => (a.endpoint < b.endpoint ? -1 : 1));
}
