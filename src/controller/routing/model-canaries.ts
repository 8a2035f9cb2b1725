/**
 * Canaries beside their primaries: each won canary route (an Ingress with the `canary`
 * annotation claims its keys apart, so canaries contest each other, not the primary) is
 * joined with the route that holds the same host, path type and path. A canary whose key no
 * primary holds is not served, with a warning. Pure.
 */
import type { ClaimState } from './claim-state.ts';
import { type ModelWarning, ingressEventReasons } from './ingress-event-reasons.ts';
import type { MapEntry, ModelCanary, ModelRoute } from './model-types.ts';
import { describeRoute, routeClaimKey } from '../../validation/ingress-claims.ts';

/** One ModelCanary per canary route and primary route, kept while both stand. */
const made = new WeakMap<ModelRoute, ModelCanary>();

export function canariesOf(
  routes: readonly ModelRoute[],
  claims: ClaimState,
): { readonly canaries: ModelCanary[]; readonly warnings: ModelWarning[] } {
  const canaries: ModelCanary[] = [];
  const warnings: ModelWarning[] = [];
  for (const route of routes) {
    if (!route.canary) continue;
    const key = routeClaimKey(route);
    const primary = claims.wonRoute(key);
    const spec = claims.holders.get(`${key} canary`)?.canary;
    if (spec === undefined) continue;
    if (primary === undefined) {
      warnings.push({
        ingress: route.ingress,
        reason: ingressEventReasons.CanaryWithoutPrimary,
        message: `Ingress ${route.ingress} is a canary (nginx.ingress.kubernetes.io/canary) for ${describeRoute(route)}, which no other Ingress serves; that path is not served until an Ingress without the canary annotation serves it.`,
      });
      continue;
    }
    let canary = made.get(route);
    if (canary?.primary !== primary || canary.spec !== spec) {
      canary = { primary, route, spec };
      made.set(route, canary);
    }
    canaries.push(canary);
  }
  return { canaries, warnings };
}

/**
 * The map value of the primary route of canary `index`: the frontend reads it, picks the
 * canary's or the primary's backend, and routes there. No backend name has this form
 * (backend names contain `:`).
 */
export function canaryTag(index: number): string {
  return `haptic-canary-${String(index + 1)}`;
}

const tagged = new WeakMap<MapEntry, Map<string, MapEntry>>();

function taggedEntry(entry: MapEntry, tag: string): MapEntry {
  let byTag = tagged.get(entry);
  if (byTag === undefined) {
    byTag = new Map();
    tagged.set(entry, byTag);
  }
  let made = byTag.get(tag);
  if (made === undefined) {
    made = { key: entry.key, backend: tag };
    byTag.set(tag, made);
  }
  return made;
}

/**
 * A map's entries with those of canaries' primary routes (`primaryEntries`, by primary)
 * answering the canary's tag instead of the primary's backend. The same list when there are
 * no canaries.
 */
export function withCanaryTags(
  entries: readonly MapEntry[],
  canaries: readonly ModelCanary[],
  primaryEntries: (route: ModelRoute) => readonly MapEntry[],
): readonly MapEntry[] {
  if (canaries.length === 0) return entries;
  const tags = new Map<MapEntry, string>();
  for (const [index, canary] of canaries.entries()) {
    for (const entry of primaryEntries(canary.primary)) tags.set(entry, canaryTag(index));
  }
  return entries.map((entry) => {
    const tag = tags.get(entry);
    return tag === undefined ? entry : taggedEntry(entry, tag);
  });
}
