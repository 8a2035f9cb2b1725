import { describe, expect, it } from 'vitest';
import { minimumSlots, serverSlots, slotCount, spareEndpoint } from './server-slots.ts';
import { collidingEndpoints } from '../../../bench/colliding-endpoints.ts';
import type { ModelServer } from './model-types.ts';

function servers(count: number, offset = 0): ModelServer[] {
  return Array.from({ length: count }, (_, i) => {
    const address = `10.1.${Math.floor((i + offset) / 250)}.${((i + offset) % 250) + 1}`;
    return { name: `s${i + 1}`, address, port: 8080, endpoint: `${address}:8080` };
  });
}

function placed(slots: ReturnType<typeof serverSlots>): Map<string, string> {
  return new Map(slots.filter((slot) => !slot.spare).map((slot) => [slot.endpoint, slot.name]));
}

describe('slotCount', () => {
  it.each([
    [0, minimumSlots],
    [3, 4],
    [4, 8],
    [6, 8],
    [7, 16],
    [100, 128],
    [103, 256],
    [1000, 2048],
  ])('gives %i endpoints %i slots', (endpoints, slots) => {
    expect(slotCount(endpoints)).toBe(slots);
  });

  it('always leaves at least a quarter of the slots spare', () => {
    for (let n = 0; n <= 5000; n += 1) {
      const count = slotCount(n);
      expect(count - n).toBeGreaterThanOrEqual(Math.ceil(n / 4));
      expect(Math.log2(count) % 1).toBe(0);
    }
  });
});

describe('serverSlots', () => {
  it('places every endpoint once and marks the rest spare', () => {
    const slots = serverSlots(servers(5));
    expect(slots).toHaveLength(8);
    expect(slots.map((slot) => slot.name)).toEqual([
      's1',
      's2',
      's3',
      's4',
      's5',
      's6',
      's7',
      's8',
    ]);
    expect([...placed(slots).keys()].sort()).toEqual(
      servers(5)
        .map((s) => s.endpoint)
        .sort(),
    );
    for (const slot of slots.filter((s) => s.spare)) expect(slot.endpoint).toBe(spareEndpoint);
  });

  it('keeps every other endpoint in its slot when one is added or removed within the count', () => {
    for (let n = 1; n < 400; n += 1) {
      if (slotCount(n) !== slotCount(n + 1)) continue;
      const before = placed(serverSlots(servers(n)));
      const after = placed(serverSlots(servers(n + 1)));
      let moved = 0;
      for (const [endpoint, name] of before) if (after.get(endpoint) !== name) moved += 1;
      // Linear probing can move the few endpoints that probed past the new one's slot.
      expect(moved).toBeLessThanOrEqual(Math.ceil(n / 10) + 1);
    }
  });

  it('places endpoints whose hashes all collide, each once (bench/server-slots.ts times it)', () => {
    const colliding = collidingEndpoints(4096);
    expect(colliding).toHaveLength(4096);
    const slots = serverSlots(colliding);
    expect(slots).toHaveLength(8192);
    expect(placed(slots).size).toBe(4096);
    expect(serverSlots(colliding)).toEqual(slots);
  });

  it('is a function of the endpoints alone', () => {
    expect(serverSlots(servers(37))).toEqual(serverSlots(servers(37)));
  });
});
