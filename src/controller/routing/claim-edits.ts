/**
 * `editClaims`: the ClaimState of the last model edited by the Ingresses that went and came,
 * looking again only at the keys their routes claim (an admission review's state differs from
 * the last by one Ingress), and what each of the model's sorted lists loses and gains.
 */
import {
  BackendSource,
  type Candidate,
  type ClaimState,
  candidates,
  exactEntry,
  prefixEntry,
  regexEntry,
} from './claim-state.ts';
import type { ClusterSnapshot } from './cluster-snapshot.ts';
import type { BackendResult, KeptBackends } from './model-backends.ts';
import type { MapEntry, ModelBackend, ModelRoute } from './model-types.ts';
import { olderFirst } from '../../validation/ingress-claims.ts';
import type { ValidIngress } from '../../validation/validate-ingress.ts';
/** What an edit of the claims removed from and added to each of the model's sorted lists. */
export interface ListChange<T> {
  readonly removed: Set<T>;
  readonly added: T[];
}

export interface ClaimChange {
  readonly routes: ListChange<ModelRoute>;
  readonly exactMap: ListChange<MapEntry>;
  readonly prefixMap: ListChange<MapEntry>;
  readonly regexMap: ListChange<MapEntry>;
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

/** The exact map's entry for a route's exact key: an Exact route's, else a Prefix route's. */
function exactKeyEntry(state: ClaimState, route: ModelRoute): MapEntry | undefined {
  const exact = state.wonRoute(`${route.host} Exact ${route.path}`);
  if (exact !== undefined) return exactEntry(exact);
  const prefix = state.wonRoute(`${route.host} Prefix ${route.path}`);
  return prefix === undefined ? undefined : exactEntry(prefix);
}

/** Records that route `before` of a key gave way to `after`, with their map entries. */
function replaceRoute(
  result: ClaimChange,
  sample: ModelRoute,
  before: ModelRoute | undefined,
  after: ModelRoute | undefined,
): void {
  replace(result.routes, before, after);
  if (sample.pathType === 'Exact' || sample.canary) return;
  const entry = sample.pathType === 'Prefix' ? prefixEntry : regexEntry;
  replace(
    sample.pathType === 'Prefix' ? result.prefixMap : result.regexMap,
    before === undefined ? undefined : entry(before),
    after === undefined ? undefined : entry(after),
  );
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
      if (route.pathType !== 'Regex' && !route.canary) exactKeys.set(route.exactKey, route);
    }
  }
  const wonBefore = new Map<string, ModelRoute | undefined>();
  for (const key of keys.keys()) wonBefore.set(key, state.wonRoute(key));
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
    regexMap: change(),
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
    replaceRoute(result, sample, before, after);
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
