/**
 * Time to place endpoints in server slots (src/controller/routing/server-slots.ts) when their
 * hashes all collide on purpose, against as many endpoints with ordinary addresses: placing
 * stays linear (quadratic probing once took 130-560 ms for 4,096 colliding endpoints; the
 * goal is a few ms). Median of `runs` after one warm-up, in ms. The last line is one JSON
 * object.
 *
 *   node bench/server-slots.ts [count=4096] [runs=21]
 */
import { collidingEndpoints } from './colliding-endpoints.ts';
import type { ModelServer } from '../src/controller/routing/model-types.ts';
import { serverSlots } from '../src/controller/routing/server-slots.ts';

const count = Number(process.argv[2] ?? '4096');
const runs = Number(process.argv[3] ?? '21');

function ordinary(n: number): ModelServer[] {
  return Array.from({ length: n }, (_, i) => {
    const address = `10.${String(Math.floor(i / 65536))}.${String(Math.floor(i / 256) % 256)}.${String(i % 256)}`;
    return { name: '', address, port: 80, endpoint: `${address}:80` };
  }).sort((a, b) => (a.endpoint < b.endpoint ? -1 : 1));
}

function medianMs(servers: readonly ModelServer[]): number {
  serverSlots(servers);
  const times: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    serverSlots(servers);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

const colliding = collidingEndpoints(count);
const result = {
  endpoints: count,
  collidingMs: Math.round(medianMs(colliding) * 100) / 100,
  ordinaryMs: Math.round(medianMs(ordinary(count)) * 100) / 100,
};
console.log(
  `${String(count)} endpoints: ${result.collidingMs.toFixed(2)} ms all colliding, ${result.ordinaryMs.toFixed(2)} ms ordinary`,
);
console.log(JSON.stringify(result));
