/**
 * The template context: routes, backends and certificates built from a cluster snapshot,
 * every value checked (see validate-ingress.ts). Pure and deterministic: the same snapshot
 * gives the same model, in the same order, whatever order the informers delivered objects in.
 *
 * Tenants share one HAProxy, so no Ingress may hurt another:
 * - an invalid Ingress is excluded whole (with its problem); the others are served;
 * - a host belongs to the namespace that named it first; another namespace's rules and TLS
 *   hosts for it are left out unless the owner shares it (host-ownership.ts, host-claims.ts);
 * - a host and path (or TLS host) claimed by several Ingresses belongs to the oldest
 *   (ingress-claims.ts); a newer one loses only that path, with a warning naming the holder;
 * - TLS Secrets HAProxy would not load, and missing ones, leave their hosts on the default
 *   certificate with a warning (model-certificates.ts);
 * - backend names cannot collide, and no server points at the HAProxy host (model-backends.ts).
 */
import { type ClusterSnapshot, objectKey } from './cluster-snapshot.ts';
import type { ModelWarning } from './ingress-event-reasons.ts';
import type {
  ExcludedIngress,
  MapEntry,
  ModelBackend,
  ModelIngress,
  ModelResult,
  ModelRoute,
} from './model-types.ts';
import type { KeptBackends } from './model-backends.ts';
import { buildCertificates } from './model-certificates.ts';
import { type ClaimState, exactEntry, prefixEntry, regexEntry } from './claim-state.ts';
import { editClaims } from './claim-edits.ts';
import { claimAll } from './route-claims.ts';
import { HostClaims } from './host-claims.ts';
import { HostStops } from './host-stops.ts';
import { type ModelBudgets, applyBudgets, defaultModelBudgets } from './model-budgets.ts';
import { isProblem } from '../../validation/ingress-checks.ts';
import { olderFirst } from '../../validation/ingress-claims.ts';
import type { ValidIngress } from '../../validation/validate-ingress.ts';
import type { IngressView } from '../../validation/ingress-view.ts';
import { type SortedList, sortedEdit, sortedReusing } from './sorted-reuse.ts';
import { checkedIngress } from './checked-ingress.ts';
import { canariesOf, withCanaryTags } from './model-canaries.ts';

export interface ModelOptions {
  /** `namespace/name` of the default certificate Secret. */
  readonly defaultCertificate?: string;
  readonly now: Date;
  /** Backends kept from earlier builds, reused while their views stay the same objects. */
  readonly keptBackends?: KeptBackends;
  /** The sorted lists of the previous build, reused where they still hold. */
  readonly keptModel?: KeptModel;
  /** What a namespace, and all together, may use. @default defaultModelBudgets */
  readonly budgets?: ModelBudgets;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function routeOrder(a: ModelRoute, b: ModelRoute): number {
  return (
    compare(a.host, b.host) ||
    compare(a.pathType, b.pathType) ||
    b.path.length - a.path.length ||
    compare(a.path, b.path) ||
    // A canary's route has its primary's key: the primary first.
    Number(a.canary) - Number(b.canary)
  );
}

function exactOrder(a: MapEntry, b: MapEntry): number {
  return compare(a.key, b.key);
}

function prefixOrder(a: MapEntry, b: MapEntry): number {
  return b.key.length - a.key.length || compare(a.key, b.key);
}

/**
 * The maps of the winning routes (in any order: a claim key has one winner, so an exact key
 * has at most one Exact and one Prefix route), and the hosts' stops (host-stops.ts).
 */
function mapEntries(
  routes: Iterable<ModelRoute>,
  stops: HostStops,
  previous: KeptModel | undefined,
): {
  exactMap: SortedList<MapEntry>;
  prefixMap: SortedList<MapEntry>;
  regexMap: SortedList<MapEntry>;
} {
  const exact = new Map<string, MapEntry>();
  const prefix: MapEntry[] = [...stops.entries()];
  const regex: MapEntry[] = [];
  for (const route of routes) {
    if (route.canary) continue;
    if (route.pathType === 'Exact') exact.set(route.exactKey, exactEntry(route));
    else if (route.pathType === 'Regex') regex.push(regexEntry(route));
  }
  for (const route of routes) {
    if (route.pathType !== 'Prefix' || route.canary) continue;
    if (!exact.has(route.exactKey)) exact.set(route.exactKey, exactEntry(route));
    prefix.push(prefixEntry(route));
  }
  return {
    exactMap: sortedReusing(exact.values(), previous?.exactMap, exactOrder),
    prefixMap: sortedReusing(prefix, previous?.prefixMap, prefixOrder),
    // Longest first, as ingress-nginx orders regex locations; the first match wins.
    regexMap: sortedReusing(regex, previous?.regexMap, prefixOrder),
  };
}

/** A served Ingress as the model lists it, one object per checked Ingress. */
const modelIngresses = new WeakMap<ValidIngress, ModelIngress>();

function modelIngress(ingress: ValidIngress): ModelIngress {
  let made = modelIngresses.get(ingress);
  if (made === undefined) {
    made = { namespace: ingress.namespace, name: ingress.name, annotations: ingress.annotations };
    modelIngresses.set(ingress, made);
  }
  return made;
}

function byName(
  a: { namespace: string; name: string },
  b: { namespace: string; name: string },
): number {
  return compare(objectKey(a.namespace, a.name), objectKey(b.namespace, b.name));
}

/**
 * The sorted lists of the last model built, from which the next build sorts only what
 * changed (sorted-reuse.ts): an admission review's state differs from the last one by an
 * Ingress or two. The result is the same as a build without it.
 */
export class KeptModel {
  order: SortedList<IngressView> | undefined;
  routes: SortedList<ModelRoute> | undefined;
  exactMap: SortedList<MapEntry> | undefined;
  prefixMap: SortedList<MapEntry> | undefined;
  regexMap: SortedList<MapEntry> | undefined;
  backends: SortedList<ModelBackend> | undefined;
  ingresses: SortedList<ModelIngress> | undefined;
  /** The claims of the last build, which the next edits while its backends' sources stand. */
  claims: ClaimState | undefined;
  /** The hosts' owners of the last build, edited with the claims. */
  hosts: HostClaims | undefined;
  /** The hosts' stops of the last build, edited with the routes. */
  stops: HostStops | undefined;
}

/** A change of at most one Ingress per this many is edited into the last build's lists. */
const editRatio = 16;

interface ModelLists {
  readonly routes: SortedList<ModelRoute>;
  readonly exactMap: SortedList<MapEntry>;
  readonly prefixMap: SortedList<MapEntry>;
  readonly regexMap: SortedList<MapEntry>;
  readonly backends: SortedList<ModelBackend>;
  readonly ingresses: SortedList<ModelIngress>;
}

function backendOrder(a: ModelBackend, b: ModelBackend): number {
  return compare(a.name, b.name);
}

/** What a build decided of the claims, kept for the next build to edit. */
interface Decided {
  readonly lists: ModelLists;
  readonly claims: ClaimState;
  readonly hosts: HostClaims;
  readonly stops: HostStops;
}

/** What is served of each valid Ingress (its hosts' owners admit), in the same order. */
function servedOf(valid: readonly ValidIngress[], hosts: HostClaims): readonly ValidIngress[] {
  return hosts.none ? valid : valid.map((ingress) => hosts.served(ingress));
}

/** Every list from the claims of every Ingress, sorted from the last build's lists. */
function builtLists(
  valid: readonly ValidIngress[],
  snapshot: ClusterSnapshot,
  options: ModelOptions,
): Decided {
  const previous = options.keptModel;
  const hosts = new HostClaims(valid);
  const served = servedOf(valid, hosts);
  const { state, won } = claimAll(served, snapshot, options.keptBackends, previous?.claims);
  const routes = sortedReusing(won, previous?.routes, routeOrder);
  const stops = new HostStops(won);
  const backends = [...state.backends.values()].map(({ backend }) => backend);
  return {
    lists: {
      routes,
      ...mapEntries(routes.members, stops, previous),
      backends: sortedReusing(backends, previous?.backends, backendOrder),
      ingresses: sortedReusing(valid.map(modelIngress), previous?.ingresses, byName),
    },
    claims: state,
    hosts,
    stops,
  };
}

/** The valid Ingresses the last build had and this one has not, and the other way round. */
function changedIngresses(
  last: SortedList<IngressView>,
  next: SortedList<IngressView>,
): { readonly removed: ValidIngress[]; readonly added: ValidIngress[] } {
  const valid = (views: readonly IngressView[], other: SortedList<IngressView>): ValidIngress[] =>
    views
      .filter((view) => !other.members.has(view))
      .map(checkedIngress)
      .filter((checked): checked is ValidIngress => !isProblem(checked));
  return { removed: valid(last.items, next), added: valid(next.items, last) };
}

/**
 * The lists of the last build edited by the Ingresses that went and came (route-claims.ts
 * editClaims), when it can: the last build's claims hold for this snapshot's backends and few
 * Ingresses changed. Undefined otherwise.
 */
function editedLists(
  previous: KeptModel | undefined,
  order: SortedList<IngressView>,
  valid: readonly ValidIngress[],
  snapshot: ClusterSnapshot,
  keptBackends: KeptBackends | undefined,
): Decided | undefined {
  if (previous === undefined) return undefined;
  const {
    claims,
    hosts,
    stops,
    order: lastOrder,
    routes,
    exactMap,
    prefixMap,
    regexMap,
    backends,
    ingresses,
  } = previous;
  if (
    claims === undefined ||
    hosts === undefined ||
    stops === undefined ||
    !claims.holdsFor(snapshot) ||
    lastOrder === undefined ||
    routes === undefined ||
    exactMap === undefined ||
    prefixMap === undefined ||
    regexMap === undefined ||
    backends === undefined ||
    ingresses === undefined
  ) {
    return undefined;
  }
  const { removed, added } = changedIngresses(lastOrder, order);
  if ((removed.length + added.length) * editRatio > valid.length) return undefined;
  // Kept again only with the lists, once the whole build is done: a build that throws leaves
  // no claims ahead of the lists behind, and the next build is made from nothing.
  previous.claims = undefined;
  previous.hosts = undefined;
  previous.stops = undefined;
  const served = hosts.edit(removed, added);
  const change = editClaims(claims, served.removed, served.added, snapshot, keptBackends);
  const stopped = stops.edit(change.routes.removed, change.routes.added);
  const lists: ModelLists = {
    routes: sortedEdit(routes, change.routes.removed, change.routes.added, routeOrder),
    exactMap: sortedEdit(exactMap, change.exactMap.removed, change.exactMap.added, exactOrder),
    prefixMap: sortedEdit(
      prefixMap,
      new Set([...change.prefixMap.removed, ...stopped.removed]),
      [...change.prefixMap.added, ...stopped.added],
      prefixOrder,
    ),
    regexMap: sortedEdit(regexMap, change.regexMap.removed, change.regexMap.added, prefixOrder),
    backends: sortedEdit(backends, change.backends.removed, change.backends.added, backendOrder),
    ingresses: sortedEdit(
      ingresses,
      new Set(removed.map(modelIngress)),
      added.map(modelIngress),
      byName,
    ),
  };
  return { lists, claims, hosts, stops };
}

/**
 * The warnings of the valid Ingresses: their annotations' findings, then each one's hosts'
 * conflicts and its claims'.
 */
function warningsOf(
  valid: readonly ValidIngress[],
  hosts: HostClaims,
  claims: ClaimState,
): ModelWarning[] {
  const all: ModelWarning[] = [];
  for (const ingress of valid) {
    for (const { reason, message } of ingress.findings) {
      all.push({ ingress: objectKey(ingress.namespace, ingress.name), reason, message });
    }
  }
  if (hosts.none) return [...all, ...claims.warningsOf(valid)];
  for (const ingress of valid) {
    all.push(...hosts.warningsOf(ingress), ...claims.warningsOf([hosts.served(ingress)]));
  }
  return all;
}

/** Builds the model; `ingresses` in the snapshot are already filtered to our class. */
export function buildRoutingModel(snapshot: ClusterSnapshot, options: ModelOptions): ModelResult {
  const previous = options.keptModel;
  const excluded: ExcludedIngress[] = [];
  const valid: ValidIngress[] = [];
  const order = sortedReusing(snapshot.ingresses, previous?.order, olderFirst);
  for (const view of order.items) {
    const checked = checkedIngress(view);
    if (isProblem(checked)) {
      excluded.push({ namespace: view.namespace, name: view.name, ...checked });
    } else {
      valid.push(checked);
    }
  }
  const { lists, claims, hosts, stops } =
    editedLists(previous, order, valid, snapshot, options.keptBackends) ??
    builtLists(valid, snapshot, options);
  const served = servedOf(valid, hosts);
  const tls = buildCertificates(served, snapshot, options);
  const budgeted = applyBudgets(
    {
      backends: lists.backends.items,
      routes: lists.routes.items,
      certificates: tls.certificates,
      files: tls.files,
      served,
    },
    options.budgets ?? defaultModelBudgets,
  );
  const canaries = canariesOf(lists.routes.items, claims);
  if (previous !== undefined) {
    previous.order = order;
    previous.claims = claims;
    previous.hosts = hosts;
    previous.stops = stops;
    Object.assign(previous, lists);
  }
  return {
    model: {
      routes: lists.routes.items,
      // A canary's primary route answers the canary's tag (model-canaries.ts).
      exactMap: withCanaryTags(lists.exactMap.items, canaries.canaries, (r) => [exactEntry(r)]),
      prefixMap: withCanaryTags(lists.prefixMap.items, canaries.canaries, (r) => [prefixEntry(r)]),
      regexMap: withCanaryTags(lists.regexMap.items, canaries.canaries, (r) => [regexEntry(r)]),
      canaries: canaries.canaries,
      backends: budgeted.backends,
      certificates: budgeted.certificates,
      defaultCertificate: tls.defaultCertificate,
      ingresses: lists.ingresses.items,
    },
    files: budgeted.files,
    excluded: [...excluded].sort(byName),
    warnings: [
      ...warningsOf(valid, hosts, claims),
      ...canaries.warnings,
      ...tls.warnings,
      ...budgeted.warnings,
    ],
  };
}
