/**
 * The template context: routes, backends and certificates built from a cluster snapshot,
 * every value checked (see validate-ingress.ts). Pure and deterministic: the same snapshot
 * gives the same model, in the same order, whatever order the informers delivered objects in.
 *
 * Tenants share one HAProxy, so no Ingress may hurt another:
 * - an invalid Ingress is excluded whole (with its problem); the others are served;
 * - a host and path (or TLS host) claimed by several Ingresses belongs to the oldest
 *   (ingress-claims.ts); a newer one loses only that path, with a warning naming the holder;
 * - TLS Secrets HAProxy would not load, and missing ones, leave their hosts on the default
 *   certificate with a warning (model-certificates.ts);
 * - backend names cannot collide, and no server points at the HAProxy host (model-backends.ts).
 */
import type { ModelSlot } from './server-slots.ts';
import { type ClusterSnapshot, objectKey } from './cluster-snapshot.ts';
import { type ModelWarning, ingressEventReasons } from './ingress-events.ts';
import {
  type BackendResult,
  type KeptBackends,
  backendName,
  buildBackend,
} from './model-backends.ts';
import { buildCertificates } from './model-certificates.ts';
import { isProblem } from '../validation/ingress-checks.ts';
import {
  describeRoute,
  olderFirst,
  routeClaimKey,
  servedHost,
  servedPath,
} from '../validation/ingress-claims.ts';
import type { IngressRoute, ValidIngress } from '../validation/validate-ingress.ts';
import type { IngressView } from '../validation/ingress-view.ts';
import { type SortedList, sortedReusing } from './sorted-reuse.ts';
import { checkedIngress } from './checked-ingress.ts';

export interface ModelRoute {
  /** Host as written; `*` for rules without a host. */
  readonly host: string;
  readonly pathType: 'Exact' | 'Prefix';
  readonly path: string;
  /** Map keys: the path itself (without a trailing slash) and, for Prefix, the subtree. */
  readonly exactKey: string;
  readonly prefixKey: string;
  readonly backend: string;
  readonly ingress: string;
}

export interface ModelServer {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  /** `address:port`, IPv6 in brackets. */
  readonly endpoint: string;
}

/** One line of a map file: a key (host and path) and a backend name. */
export interface MapEntry {
  readonly key: string;
  readonly backend: string;
}

export interface ModelBackend {
  readonly name: string;
  readonly namespace: string;
  readonly service: string;
  readonly servicePort: string;
  readonly servers: readonly ModelServer[];
  /** The servers placed in a fixed number of slots, the rest spare (server-slots.ts). */
  readonly slots: readonly ModelSlot[];
}

export interface ModelCertificate {
  /** Path of the PEM file under the base directory. */
  readonly file: string;
  readonly secret: string;
  /** SNI names (never empty: an entry without hosts serves the Ingress's rule hosts). */
  readonly hosts: readonly string[];
}

export interface ModelIngress {
  readonly namespace: string;
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
}

export interface ExcludedIngress {
  readonly namespace: string;
  readonly name: string;
  readonly field: string;
  readonly message: string;
}

export interface RoutingModel {
  readonly routes: readonly ModelRoute[];
  /**
   * Exact-match keys: Exact paths, and Prefix paths themselves (`/foo` for Prefix `/foo`),
   * Exact winning when both claim a key. Sorted by key.
   */
  readonly exactMap: readonly MapEntry[];
  /** Prefix subtrees (`host/foo/`), longest first, for HAProxy's first-match `map_beg`. */
  readonly prefixMap: readonly MapEntry[];
  readonly backends: readonly ModelBackend[];
  readonly certificates: readonly ModelCertificate[];
  /** `ssl/default.pem`, or null without a usable default certificate. */
  readonly defaultCertificate: string | null;
  readonly ingresses: readonly ModelIngress[];
}

export interface ModelResult {
  readonly model: RoutingModel;
  /** Files the model refers to (certificates), path → content. */
  readonly files: ReadonlyMap<string, string>;
  readonly excluded: readonly ExcludedIngress[];
  /**
   * Parts of served Ingresses left out (conflicts, TLS Secrets, refused endpoints), one
   * sentence each; `ingressEvents` turns them into one Event per Ingress.
   */
  readonly warnings: readonly ModelWarning[];
}

export interface ModelOptions {
  /** `namespace/name` of the default certificate Secret. */
  readonly defaultCertificate?: string;
  readonly now: Date;
  /** Backends kept from earlier builds, reused while their views stay the same objects. */
  readonly keptBackends?: KeptBackends;
  /** The sorted lists of the previous build, reused where they still hold. */
  readonly keptModel?: KeptModel;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function routeOrder(a: ModelRoute, b: ModelRoute): number {
  return (
    compare(a.host, b.host) ||
    compare(a.pathType, b.pathType) ||
    b.path.length - a.path.length ||
    compare(a.path, b.path)
  );
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

function exactOrder(a: MapEntry, b: MapEntry): number {
  return compare(a.key, b.key);
}

function prefixOrder(a: MapEntry, b: MapEntry): number {
  return b.key.length - a.key.length || compare(a.key, b.key);
}

/**
 * The maps of the winning routes (in any order: a claim key has one winner, so an exact key
 * has at most one Exact and one Prefix route).
 */
function mapEntries(
  routes: Iterable<ModelRoute>,
  previous: KeptModel | undefined,
): { exactMap: SortedList<MapEntry>; prefixMap: SortedList<MapEntry> } {
  const exact = new Map<string, MapEntry>();
  const prefix: MapEntry[] = [];
  for (const route of routes) {
    if (route.pathType === 'Exact')
      exact.set(route.exactKey, entryOf(exactEntries, route, route.exactKey));
  }
  for (const route of routes) {
    if (route.pathType !== 'Prefix') continue;
    if (!exact.has(route.exactKey)) {
      exact.set(route.exactKey, entryOf(exactEntries, route, route.exactKey));
    }
    prefix.push(entryOf(prefixEntries, route, route.prefixKey));
  }
  return {
    exactMap: sortedReusing(exact.values(), previous?.exactMap, exactOrder),
    prefixMap: sortedReusing(prefix, previous?.prefixMap, prefixOrder),
  };
}

/** One route an Ingress claims: made once per checked Ingress (checkedIngress keeps it). */
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

/** The Ingresses' routes, each host and path to the oldest Ingress that claims it. */
function claimRoutes(
  ingresses: readonly ValidIngress[],
  snapshot: ClusterSnapshot,
  warnings: ModelWarning[],
  kept: KeptBackends | undefined,
  previous: KeptModel | undefined,
): { routes: SortedList<ModelRoute>; backends: SortedList<ModelBackend> } {
  const holders = new Map<string, string>();
  const won: ModelRoute[] = [];
  const backends = new Map<string, BackendResult>();
  // The last build's backends stand while the Services, EndpointSlices and resolutions do.
  const built = previous?.built;
  const earlier =
    built !== undefined &&
    built.from.services === snapshot.services &&
    built.from.endpointSlices === snapshot.endpointSlices &&
    built.from.fqdnNames === snapshot.fqdnNames
      ? built.backends
      : undefined;
  for (const ingress of ingresses) {
    // Backends of won routes whose endpoints have problems, told to this Ingress by name.
    let troubled: string[] | undefined;
    for (const { key, source, route } of candidates(ingress)) {
      const label = route.ingress;
      const holder = holders.get(key);
      if (holder !== undefined) {
        // A path written twice in one Ingress is served once; another Ingress's is a conflict.
        if (holder === label) continue;
        warnings.push({
          ingress: label,
          reason: ingressEventReasons.IngressConflict,
          message: `Ingress ${label} claims ${describeRoute(source)} in ${source.field}, which Ingress ${holder} (created earlier) already serves; that path is left out and the rest of ${label} is served. Use another host or path, or remove it from ${holder} first.`,
        });
        continue;
      }
      const name = route.backend;
      let backend = backends.get(name);
      if (backend === undefined) {
        backend =
          earlier?.get(name) ??
          (kept === undefined
            ? buildBackend(snapshot, ingress.namespace, source.service)
            : kept.build(snapshot, ingress.namespace, source.service));
        backends.set(name, backend);
      }
      if (backend.problems.length > 0) (troubled ??= []).push(name);
      holders.set(key, label);
      won.push(route);
    }
    if (troubled === undefined) continue;
    const label = objectKey(ingress.namespace, ingress.name);
    for (const name of [...new Set(troubled)].sort(compare)) {
      for (const problem of backends.get(name)?.problems ?? []) {
        warnings.push({ ingress: label, ...problem });
      }
    }
  }
  if (previous !== undefined) {
    const { services, endpointSlices, fqdnNames } = snapshot;
    previous.built = { from: { services, endpointSlices, fqdnNames }, backends };
  }
  return {
    routes: sortedReusing(won, previous?.routes, routeOrder),
    backends: sortedReusing(
      [...backends.values()].map(({ backend }) => backend),
      previous?.backends,
      (a, b) => compare(a.name, b.name),
    ),
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
  backends: SortedList<ModelBackend> | undefined;
  ingresses: SortedList<ModelIngress> | undefined;
  /** Backends of the last build, by name, while the Services and endpoints stay the same. */
  built:
    | {
        readonly from: Pick<ClusterSnapshot, 'services' | 'endpointSlices' | 'fqdnNames'>;
        readonly backends: ReadonlyMap<string, BackendResult>;
      }
    | undefined;
}

/** Builds the model; `ingresses` in the snapshot are already filtered to our class. */
export function buildRoutingModel(snapshot: ClusterSnapshot, options: ModelOptions): ModelResult {
  const previous = options.keptModel;
  const excluded: ExcludedIngress[] = [];
  const warnings: ModelWarning[] = [];
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
  const { routes, backends } = claimRoutes(
    valid,
    snapshot,
    warnings,
    options.keptBackends,
    previous,
  );
  const maps = mapEntries(routes.members, previous);
  const tls = buildCertificates(valid, snapshot, options);
  const ingresses = sortedReusing(valid.map(modelIngress), previous?.ingresses, byName);
  if (previous !== undefined) {
    previous.order = order;
    previous.routes = routes;
    previous.exactMap = maps.exactMap;
    previous.prefixMap = maps.prefixMap;
    previous.backends = backends;
    previous.ingresses = ingresses;
  }
  return {
    model: {
      routes: routes.items,
      exactMap: maps.exactMap.items,
      prefixMap: maps.prefixMap.items,
      backends: backends.items,
      certificates: tls.certificates,
      defaultCertificate: tls.defaultCertificate,
      ingresses: ingresses.items,
    },
    files: tls.files,
    excluded: [...excluded].sort(byName),
    warnings: [...warnings, ...tls.warnings],
  };
}
