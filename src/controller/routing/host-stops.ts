/**
 * A request for a host that Ingresses serve stops at that host: a path none of the host's
 * routes matches is answered by the template's not-found backend, never handed on to the
 * wildcard host (`*.example.com`) or to rules without a host, as ingress-nginx answers from the
 * host's own server block. Otherwise whoever holds a wildcard or the catch-all would receive
 * the paths a host's owner does not route — `/.well-known/acme-challenge/…` among them, enough
 * to obtain a certificate for a host it does not own.
 *
 * The stop is one prefix-map entry per such host, `host/` → notFoundBackend, the shortest key
 * of the host, so its own routes match first. A host with a Prefix `/` route needs none.
 * HostStops counts the won routes of each host and is edited with them, so a review changes
 * only the entries of the hosts its Ingress touches. Pure.
 */
import type { ListChange } from './claim-edits.ts';
import type { MapEntry, ModelRoute } from './model-types.ts';

/** The default template's backend that answers 404; a template serving maps must have it. */
export const notFoundBackend = 'haptic_not_found';

export class HostStops {
  /** Won routes per host (rules without a host aside). */
  readonly #routes = new Map<string, number>();
  /** Hosts with a won Prefix `/` route. */
  readonly #rooted = new Set<string>();
  /** The stop entry of each host that has one. */
  readonly #entries = new Map<string, MapEntry>();

  constructor(routes: Iterable<ModelRoute>) {
    const touched = new Set<string>();
    this.#count(routes, 1, touched);
    for (const host of touched) this.#settle(host, undefined);
  }

  /** The stop entries, in no order. */
  entries(): Iterable<MapEntry> {
    return this.#entries.values();
  }

  /** Edits the counts by the won routes that went and came; returns the entries that did. */
  edit(removed: Iterable<ModelRoute>, added: Iterable<ModelRoute>): ListChange<MapEntry> {
    const touched = new Set<string>();
    this.#count(removed, -1, touched);
    this.#count(added, 1, touched);
    const change: ListChange<MapEntry> = { removed: new Set(), added: [] };
    for (const host of touched) this.#settle(host, change);
    return change;
  }

  #count(routes: Iterable<ModelRoute>, by: 1 | -1, touched: Set<string>): void {
    for (const route of routes) {
      // A canary's route is served through its primary's, which counts for the host.
      if (route.host === '*' || route.canary) continue;
      touched.add(route.host);
      this.#routes.set(route.host, (this.#routes.get(route.host) ?? 0) + by);
      // One claim key, so at most one won Prefix `/` route per host.
      if (route.pathType === 'Prefix' && route.path === '/') {
        if (by > 0) this.#rooted.add(route.host);
        else this.#rooted.delete(route.host);
      }
    }
  }

  /** Gives `host` its stop entry, or takes it away, as its routes now say. */
  #settle(host: string, change: ListChange<MapEntry> | undefined): void {
    const count = this.#routes.get(host) ?? 0;
    if (count === 0) this.#routes.delete(host);
    const wanted = count > 0 && !this.#rooted.has(host);
    const entry = this.#entries.get(host);
    if (wanted && entry === undefined) {
      const made = { key: `${host}/`, backend: notFoundBackend };
      this.#entries.set(host, made);
      change?.added.push(made);
    } else if (!wanted && entry !== undefined) {
      this.#entries.delete(host);
      change?.removed.add(entry);
    }
  }
}
