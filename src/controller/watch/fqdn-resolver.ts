/**
 * Resolves the names of FQDN EndpointSlices in the controller (the I/O half of FQDN
 * endpoints; the model refuses what they resolve to). The model renders the addresses found
 * here, never the names, so HAProxy cannot resolve a name differently from what was checked.
 *
 * Lookups go through the system resolver (getaddrinfo, as HAProxy's `init-addr libc` would),
 * at most `concurrency` at a time (each holds one of libuv's few threads while it runs), and
 * never on the render path: `resolutions()` answers from what is known and queues the rest;
 * a finished lookup that changes an answer calls `onChange`, which re-renders. Names in use
 * are re-resolved every `refreshMs`; names no longer asked for are forgotten.
 */
import { lookup } from 'node:dns/promises';
import type { Logger } from 'pino';
import type { NameResolution } from '../routing/cluster-snapshot.ts';

export interface FqdnResolverOptions {
  /** Called when a name resolves to something other than before. */
  readonly onChange: () => void;
  /** How often names in use are resolved again. @default 30 s */
  readonly refreshMs?: number;
  /** Lookups at once. @default 2 */
  readonly concurrency?: number;
  readonly logger: Logger;
}

interface Entry {
  resolution: NameResolution | undefined;
  resolvedAt: number;
  wantedAt: number;
}

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    if (typeof error.code === 'string') return error.code;
  }
  return 'lookup failed';
}

async function resolveName(name: string): Promise<NameResolution> {
  try {
    const found = await lookup(name, { all: true, order: 'verbatim' });
    const addresses = [...new Set(found.map((entry) => entry.address))].sort();
    return addresses.length > 0 ? { addresses } : { error: 'no addresses' };
  } catch (error) {
    return { error: errorCode(error) };
  }
}

export class FqdnResolver {
  readonly #options: FqdnResolverOptions;
  readonly #refreshMs: number;
  readonly #entries = new Map<string, Entry>();
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  #running = 0;
  #stopped = false;
  readonly #timer: NodeJS.Timeout;

  constructor(options: FqdnResolverOptions) {
    this.#options = options;
    this.#refreshMs = options.refreshMs ?? 30_000;
    this.#timer = setInterval(() => {
      this.#refresh();
    }, this.#refreshMs);
    this.#timer.unref();
  }

  /** What `names` resolved to, as far as known; queues lookups for new and stale names. */
  resolutions(names: Iterable<string>): ReadonlyMap<string, NameResolution> {
    const now = Date.now();
    const known = new Map<string, NameResolution>();
    for (const name of names) {
      const entry = this.#entries.get(name) ?? {
        resolution: undefined,
        resolvedAt: 0,
        wantedAt: 0,
      };
      entry.wantedAt = now;
      this.#entries.set(name, entry);
      if (entry.resolution !== undefined) known.set(name, entry.resolution);
      if (now - entry.resolvedAt >= this.#refreshMs) this.#enqueue(name);
    }
    return known;
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#queue.length = 0;
  }

  /** Resolves names in use again and forgets names nobody asked for in three periods. */
  #refresh(): void {
    const now = Date.now();
    for (const [name, entry] of this.#entries) {
      if (now - entry.wantedAt > 3 * this.#refreshMs) this.#entries.delete(name);
      else if (now - entry.resolvedAt >= this.#refreshMs) this.#enqueue(name);
    }
  }

  #enqueue(name: string): void {
    if (this.#stopped || this.#queued.has(name)) return;
    this.#queued.add(name);
    this.#queue.push(name);
    this.#drain();
  }

  #drain(): void {
    while (!this.#stopped && this.#running < (this.#options.concurrency ?? 2)) {
      const name = this.#queue.shift();
      if (name === undefined) return;
      this.#running += 1;
      void resolveName(name).then((resolution) => {
        this.#running -= 1;
        this.#queued.delete(name);
        this.#settle(name, resolution);
        this.#drain();
      });
    }
  }

  #settle(name: string, resolution: NameResolution): void {
    const entry = this.#entries.get(name);
    if (this.#stopped || entry === undefined) return;
    const changed = JSON.stringify(entry.resolution) !== JSON.stringify(resolution);
    entry.resolution = resolution;
    entry.resolvedAt = Date.now();
    if (!changed) return;
    this.#options.logger.info({ name, resolution }, 'FQDN endpoint resolved');
    this.#options.onChange();
  }
}
