/**
 * Server slots of a backend: a fixed number of `server` lines, each either an endpoint or a
 * spare (`disabled`, at a placeholder address), so that endpoints coming and going change
 * only slot lines, which agents apply through HAProxy's runtime API without a reload
 * (runtime-changes.ts). Pure: the same endpoints always give the same slots, so a fresh
 * render equals the files an agent holds after any sequence of runtime changes.
 *
 * - The count is the smallest power of two that leaves at least a quarter of the slots spare
 *   (and at least `minimumSlots`): growing or shrinking across a power of two is a reload.
 * - Each endpoint takes the slot its `address:port` hashes to, or the next free one (linear
 *   probing, endpoints placed in sorted order), so an endpoint keeps its slot while others
 *   come and go, and its connections and load-balancing state with it. Probing has a budget
 *   (`probesPerSlot`); past it, as only endpoints colliding on purpose get, an endpoint takes
 *   the lowest free slot.
 */
import type { ModelServer, ModelSlot } from './model-types.ts';

/** Slots of a backend with no endpoints. @default 4 */
export const minimumSlots = 4;

/** The address a spare slot holds: nothing listens there, and the slot is `disabled`. */
export const spareEndpoint = '127.0.0.1:1';

/** The number of slots for `endpoints` endpoints. */
export function slotCount(endpoints: number): number {
  const wanted = Math.max(minimumSlots, endpoints + Math.ceil(endpoints / 4));
  return 2 ** Math.ceil(Math.log2(wanted));
}

/** FNV-1a, 32 bits: a stable, well-spread hash of a short string. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * Probe steps all endpoints of a backend may take, per slot. Endpoints whose hashes collide
 * on purpose (EndpointSlices are written by whoever may write them in the namespace) made the
 * probing quadratic: 4,096 of them took 130–560 ms of the controller's event loop on every
 * change of their slices. Past the budget an endpoint takes the lowest free slot instead, which
 * is as deterministic; endpoints of real clusters stay far below it (at most 4 in 5 slots are
 * taken, a few steps each).
 */
const probesPerSlot = 16;

/** Places `servers` (sorted, distinct endpoints) into slots. */
export function serverSlots(servers: readonly ModelServer[]): ModelSlot[] {
  const count = slotCount(servers.length);
  const taken: (string | undefined)[] = new Array<string | undefined>(count).fill(undefined);
  let probesLeft = probesPerSlot * count;
  // Every slot below it is taken (slots are only ever taken here).
  let lowestFree = 0;
  for (const server of servers) {
    let index = fnv1a(server.endpoint) % count;
    while (taken[index] !== undefined) {
      if (probesLeft <= 0) {
        while (taken[lowestFree] !== undefined) lowestFree += 1;
        index = lowestFree;
        break;
      }
      probesLeft -= 1;
      index = (index + 1) % count;
    }
    taken[index] = server.endpoint;
  }
  return taken.map((endpoint, index) => ({
    name: `s${index + 1}`,
    endpoint: endpoint ?? spareEndpoint,
    spare: endpoint === undefined,
  }));
}
