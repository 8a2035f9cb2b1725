/**
 * Which Ingress serves each host and path: the oldest that claims it (olderFirst), so a newer
 * one loses that path with a warning naming the holder. From the claims follow the routes that
 * won, their backends, the maps' entries and each Ingress's warnings (its lost paths, then the
 * problems of its won routes' backends).
 *
 * `claimAll` decides every claim of a state; `editClaims` edits the ClaimState it left by the
 * Ingresses that went and came, looking again only at the keys their routes claim: an
 * admission review's state differs from the last by one Ingress. Both give what the other
 * would (routing-model's property tests build a model both ways).
 */
import type { ClusterSnapshot } from './cluster-snapshot.ts';
import { objectKey } from './cluster-snapshot.ts';
import { type ModelWarning, ingressEventReasons } from './ingress-event-reasons.ts';
import {
  type BackendResult,
  type KeptBackends,
  backendName,
  buildBackend,
} from './model-backends.ts';
import type { MapEntry, ModelBackend, ModelRoute } from './model-types.ts';
import {
  describeRoute,
  olderFirst,
  routeClaimKey,
  servedHost,
  servedPath,
} from '../../validation/ingress-claims.ts';
import type { IngressRoute, ValidIngress } from '../../validation/validate-ingress.ts';

/** One route an Ingress claims: made once per checked Ingress. */
interface Candidate {
  readonly key: string;
  readonly source: IngressRoute;
  readonly route: ModelRoute;
}

const candidatesOf = new WeakMap<ValidIngress, readonly Candidate[]>();

function candidates(ingress: ValidIngress): readonly Candidate[] {
  let list = candidatesOf.get(ingress);
  if (list === undefined) {
    const label = objectKey(ingress.namespace, ingress.name);
    list = ingress.routes.map((route) => {
      const host = servedHost(route.host);
      const path = servedPath(route.pathType, route.path);
      return {
        key: routeClaimKey(route),
        source: route,
        route: {
          host,
          pathType: route.pathType,
          path,
          exactKey: `${host}${path}`,
          prefixKey: `${host}${path === '/' ? '/' : `${path}/`}`,
          backend: backendName(ingress.namespace, route.service),
          ingress: label,
        },
      };
    });
    candidatesOf.set(ingress, list);
  }
  return list;
}

/** A winning route's exact-map and prefix-map entries, one object each per route. */
const exactEntries = new WeakMap<ModelRoute, MapEntry>();
const prefixEntries = new WeakMap<ModelRoute, MapEntry>();

function entryOf(cache: WeakMap<ModelRoute, MapEntry>, route: ModelRoute, key: string): MapEntry {
  let entry = cache.get(route);
  if (entry === undefined) {
    entry = { key, backend: route.backend };
    cache.set(route, entry);
  }
  return entry;
}

export function exactEntry(route: ModelRoute): MapEntry {
  return entryOf(exactEntries, route, route.exactKey);
}

export function prefixEntry(route: ModelRoute): MapEntry {
  return entryOf(prefixEntries, route, route.prefixKey);
}

/** What a state's claims read of the snapshot besides the Ingresses: its backends' sources. */
export type ClaimSources = Pick<
  ClusterSnapshot,
  'services' | 'endpointSlices' | 'fqdnNames' | 'endpointRules'
>;

/** The claims of one state, kept for the next to edit. */
export class ClaimState {
  readonly from: ClaimSources;
  /** The Ingress that holds each claim key. */
  readonly holders = new Map<string, ValidIngress>();
  /** Every Ingress that claims a key more than one does, oldest first. */
  readonly contested = new Map<string, ValidIngress[]>();
  /** The backends of the won routes, by name, and how many won routes use each. */
  readonly backends = new Map<string, BackendResult>();
  readonly uses = new Map<string, number>();
  /** The warnings of each Ingress that has any, in the order a full build tells them. */
  readonly warnings = new Map<ValidIngress, readonly ModelWarning[]>();

  constructor(snapshot: ClaimSources) {
    this.from = {
      services: snapshot.services,
      endpointSlices: snapshot.endpointSlices,
      fqdnNames: snapshot.fqdnNames,
      endpointRules: snapshot.endpointRules,
    };
  }

  /** Whether the backends kept here are the ones `snapshot` gives. */
  holdsFor(snapshot: ClaimSources): boolean {
    return (
      this.from.services === snapshot.services &&
      this.from.endpointSlices === snapshot.endpointSlices &&
      this.from.fqdnNames === snapshot.fqdnNames &&
      this.from.endpointRules === snapshot.endpointRules
    );
  }

  /** Counts `by` more won routes using backend `name`. */
  use(name: string, by: number): void {
    this.uses.set(name, (this.uses.get(name) ?? 0) + by);
  }

  /** Counts one more won route, `candidate`'s, building its backend from `source` when new. */
  useWon(namespace: string, candidate: Candidate, source: BackendSource): void {
    const name = candidate.route.backend;
    this.use(name, 1);
    if (!this.backends.has(name)) this.backends.set(name, source.build(namespace, candidate));
  }

  /**
   * Records `ingress`'s warnings from the claims as they stand: its lost paths, then the
   * problems of its won routes' backends.
   */
  tellWarnings(ingress: ValidIngress): void {
    let warnings: ModelWarning[] | undefined;
    let troubled: string[] | undefined;
    const list = candidates(ingress);
    let mine: Set<string> | undefined;
    for (const candidate of list) {
      const { key, route } = candidate;
      const holder = this.holders.get(key);
      if (holder !== ingress) {
        // Held by another Ingress: this path is left out.
        const label = holder === undefined ? undefined : labelOf(holder);
        if (label !== undefined && label !== route.ingress) {
          (warnings ??= []).push(conflict(candidate, label));
          continue;
        }
      }
      // A path written twice is served once: its first route's backend is the one used.
      if (list.length > 1) {
        mine ??= new Set();
        if (mine.has(key)) continue;
        mine.add(key);
      }
      if ((this.backends.get(route.backend)?.problems.length ?? 0) > 0) {
        (troubled ??= []).push(route.backend);
      }
    }
    if (troubled !== undefined) {
      (warnings ??= []).push(...troubleOf(ingress, troubled, this.backends));
    }
    if (warnings !== undefined) this.warnings.set(ingress, warnings);
    else this.warnings.delete(ingress);
  }

  /** The warnings of `ingresses` (in order), as a full build tells them. */
  warningsOf(ingresses: readonly ValidIngress[]): ModelWarning[] {
    const all: ModelWarning[] = [];
    if (this.warnings.size === 0) return all;
    for (const ingress of ingresses) all.push(...(this.warnings.get(ingress) ?? []));
    return all;
  }
}

function conflict(candidate: Candidate, holder: string): ModelWarning {
  const label = candidate.route.ingress;
  const { source } = candidate;
  return {
    ingress: label,
    reason: ingressEventReasons.IngressConflict,
    message: `Ingress ${label} claims ${describeRoute(source)} in ${source.field}, which Ingress ${holder} (created earlier) already serves; that path is left out and the rest of ${label} is served. Use another host or path, or remove it from ${holder} first.`,
  };
}

function labelOf(ingress: ValidIngress): string {
  return objectKey(ingress.namespace, ingress.name);
}

/** The problems of the backends of an Ingress's won routes, by backend name. */
function troubleOf(
  ingress: ValidIngress,
  names: Iterable<string>,
  backends: ReadonlyMap<string, BackendResult>,
): ModelWarning[] {
  const label = labelOf(ingress);
  const warnings: ModelWarning[] = [];
  for (const name of [...new Set(names)].sort()) {
    for (const problem of backends.get(name)?.problems ?? []) {
      warnings.push({ ingress: label, ...problem });
    }
  }
  return warnings;
}

/** Builds the backends of the won routes as they come: kept from `earlier` while they stand. */
class BackendSource {
  readonly #snapshot: ClusterSnapshot;
  readonly #kept: KeptBackends | undefined;
  readonly #earlier: ReadonlyMap<string, BackendResult> | undefined;

  constructor(
    snapshot: ClusterSnapshot,
    kept: KeptBackends | undefined,
    earlier: ReadonlyMap<string, BackendResult> | undefined,
  ) {
    this.#snapshot = snapshot;
    this.#kept = kept;
    this.#earlier = earlier;
  }

  build(namespace: string, candidate: Candidate): BackendResult {
    const { service } = candidate.source;
    return (
      this.#earlier?.get(candidate.route.backend) ??
      (this.#kept === undefined
        ? buildBackend(this.#snapshot, namespace, service)
        : this.#kept.build(this.#snapshot, namespace, service))
    );
  }
}

/**
 * Decides every claim of a state, `ingresses` oldest first (valid ones only). `earlier`: the
 * last state's claims, whose backends are reused while their sources are the same objects.
 */
export function claimAll(
  ingresses: readonly ValidIngress[],
  snapshot: ClusterSnapshot,
  kept: KeptBackends | undefined,
  earlier: ClaimState | undefined,
): { readonly state: ClaimState; readonly won: readonly ModelRoute[] } {
  const state = new ClaimState(snapshot);
  const source = new BackendSource(
    snapshot,
    kept,
    earlier?.holdsFor(snapshot) === true ? earlier.backends : undefined,
  );
  const won: ModelRoute[] = [];
  for (const ingress of ingresses) {
    for (const candidate of candidates(ingress)) {
      const { key, route } = candidate;
      const holder = state.holders.get(key);
      if (holder !== undefined) {
        // A path written twice in one Ingress is served once; another Ingress's is contested.
        if (labelOf(holder) === route.ingress) continue;
        const list = state.contested.get(key);
        if (list === undefined) state.contested.set(key, [holder, ingress]);
        else if (list.at(-1) !== ingress) list.push(ingress);
        continue;
      }
      state.useWon(ingress.namespace, candidate, source);
      state.holders.set(key, ingress);
      won.push(route);
    }
    // Older Ingresses came first: the claims of this one's keys are settled.
    state.tellWarnings(ingress);
  }
  return { state, won };
}

/** What an edit of the claims removed from and added to each of the model's sorted lists. */
export interface ListChange<T> {
  readonly removed: Set<T>;
  readonly added: T[];
}

export interface ClaimChange {
  readonly routes: ListChange<ModelRoute>;
  readonly exactMap: ListChange<MapEntry>;
  readonly prefixMap: ListChange<MapEntry>;
  readonly backends: ListChange<ModelBackend>;
}

function change<T>(): ListChange<T> {
  return { removed: new Set(), added: [] };
}

/** Records that `before` gave way to `after` (either may be none). */
function replace<T>(list: ListChange<T>, before: T | undefined, after: T | undefined): void {
  if (before === after) return;
  if (before !== undefined) list.removed.add(before);
  if (after !== undefined) list.added.push(after);
}

/** The claim that holds `key`: its holder and the holder's first candidate for it. */
function wonClaim(
  state: ClaimState,
  key: string,
): { readonly holder: ValidIngress; readonly candidate: Candidate } | undefined {
  const holder = state.holders.get(key);
  const candidate = holder && candidates(holder).find((each) => each.key === key);
  return holder === undefined || candidate === undefined ? undefined : { holder, candidate };
}

function wonRoute(state: ClaimState, key: string): ModelRoute | undefined {
  return wonClaim(state, key)?.candidate.route;
}

/** The exact map's entry for a route's exact key: an Exact route's, else a Prefix route's. */
function exactKeyEntry(state: ClaimState, route: ModelRoute): MapEntry | undefined {
  const exact = wonRoute(state, `${route.host} Exact ${route.path}`);
  if (exact !== undefined) return exactEntry(exact);
  const prefix = wonRoute(state, `${route.host} Prefix ${route.path}`);
  return prefix === undefined ? undefined : exactEntry(prefix);
}

/** Who claims `key` now: the last claimants without `removed`, with `added`'s claimants. */
function claimantsAfter(
  state: ClaimState,
  key: string,
  removed: ReadonlySet<ValidIngress>,
  added: readonly ValidIngress[],
): { before: readonly ValidIngress[]; after: ValidIngress[] } {
  const holder = state.holders.get(key);
  const before = state.contested.get(key) ?? (holder === undefined ? [] : [holder]);
  const after = before.filter((ingress) => !removed.has(ingress));
  for (const ingress of added) {
    if (after.includes(ingress) || !candidates(ingress).some((c) => c.key === key)) continue;
    const at = after.findIndex((other) => olderFirst(ingress, other) < 0);
    after.splice(at < 0 ? after.length : at, 0, ingress);
  }
  return { before, after };
}

/**
 * Edits `state` from the Ingresses of its state to those of the next: `removed` went (or
 * changed: their old check), `added` came (their new check), both valid ones only. Returns
 * what each sorted list of the model loses and gains. `state` must hold for `snapshot`'s
 * backends (ClaimState.holdsFor).
 */
export function editClaims(
  state: ClaimState,
  removed: readonly ValidIngress[],
  added: readonly ValidIngress[],
  snapshot: ClusterSnapshot,
  kept: KeptBackends | undefined,
): ClaimChange {
  const keys = new Map<string, ModelRoute>();
  const exactKeys = new Map<string, ModelRoute>();
  for (const ingress of [...removed, ...added]) {
    for (const { key, route } of candidates(ingress)) {
      keys.set(key, route);
      exactKeys.set(route.exactKey, route);
    }
  }
  const wonBefore = new Map<string, ModelRoute | undefined>();
  for (const key of keys.keys()) wonBefore.set(key, wonRoute(state, key));
  const exactBefore = new Map<string, MapEntry | undefined>();
  for (const [key, route] of exactKeys) exactBefore.set(key, exactKeyEntry(state, route));

  const gone = new Set(removed);
  const affected = new Set<ValidIngress>([...removed, ...added]);
  for (const key of keys.keys()) {
    const { before, after } = claimantsAfter(state, key, gone, added);
    for (const ingress of before) affected.add(ingress);
    for (const ingress of after) affected.add(ingress);
    const [holder] = after;
    if (holder === undefined) state.holders.delete(key);
    else state.holders.set(key, holder);
    if (after.length > 1) state.contested.set(key, after);
    else state.contested.delete(key);
  }

  const result: ClaimChange = {
    routes: change(),
    exactMap: change(),
    prefixMap: change(),
    backends: change(),
  };
  const source = new BackendSource(snapshot, kept, undefined);
  /** The backends whose use changed, as they were before. */
  const usesChanged = new Map<string, BackendResult | undefined>();
  const changing = (name: string): void => {
    if (!usesChanged.has(name)) usesChanged.set(name, state.backends.get(name));
  };
  for (const [key, sample] of keys) {
    const before = wonBefore.get(key);
    const claim = wonClaim(state, key);
    const after = claim?.candidate.route;
    if (before === after) continue;
    replace(result.routes, before, after);
    if (sample.pathType === 'Prefix') {
      replace(
        result.prefixMap,
        before === undefined ? undefined : prefixEntry(before),
        after === undefined ? undefined : prefixEntry(after),
      );
    }
    if (before !== undefined) {
      changing(before.backend);
      state.use(before.backend, -1);
    }
    if (claim !== undefined) {
      changing(claim.candidate.route.backend);
      state.useWon(claim.holder.namespace, claim.candidate, source);
    }
  }
  for (const [name, before] of usesChanged) {
    if ((state.uses.get(name) ?? 0) > 0) {
      replace(result.backends, before?.backend, state.backends.get(name)?.backend);
      continue;
    }
    state.uses.delete(name);
    state.backends.delete(name);
    replace(result.backends, before?.backend, undefined);
  }
  for (const [key, route] of exactKeys) {
    replace(result.exactMap, exactBefore.get(key), exactKeyEntry(state, route));
  }

  for (const ingress of affected) {
    if (gone.has(ingress)) state.warnings.delete(ingress);
    else state.tellWarnings(ingress);
  }
  return result;
}
