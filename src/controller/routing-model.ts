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
  type EndpointProblem,
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
import type { ValidIngress } from '../validation/validate-ingress.ts';
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

function mapEntries(routes: readonly ModelRoute[]): {
  exactMap: MapEntry[];
  prefixMap: MapEntry[];
} {
  const exact = new Map<string, string>();
  for (const route of routes) {
    if (route.pathType === 'Exact') exact.set(route.exactKey, route.backend);
  }
  for (const route of routes) {
    if (route.pathType === 'Prefix' && !exact.has(route.exactKey)) {
      exact.set(route.exactKey, route.backend);
    }
  }
  const prefix = routes
    .filter((route) => route.pathType === 'Prefix')
    .map((route) => ({ key: route.prefixKey, backend: route.backend }))
    .sort((a, b) => b.key.length - a.key.length || compare(a.key, b.key));
  return {
    exactMap: [...exact.entries()]
      .sort(([a], [b]) => compare(a, b))
      .map(([key, backend]) => ({ key, backend })),
    prefixMap: prefix,
  };
}

/** The Ingresses' routes, each host and path to the oldest Ingress that claims it. */
function claimRoutes(
  ingresses: readonly ValidIngress[],
  snapshot: ClusterSnapshot,
  warnings: ModelWarning[],
  kept: KeptBackends | undefined,
): { routes: ModelRoute[]; backends: ModelBackend[] } {
  const routes = new Map<string, ModelRoute>();
  const backends = new Map<
    string,
    { backend: ModelBackend; problems: readonly EndpointProblem[] }
  >();
  for (const ingress of ingresses) {
    const label = objectKey(ingress.namespace, ingress.name);
    const used = new Set<string>();
    for (const route of ingress.routes) {
      const key = routeClaimKey(route);
      const holder = routes.get(key)?.ingress;
      if (holder !== undefined) {
        // A path written twice in one Ingress is served once; another Ingress's is a conflict.
        if (holder === label) continue;
        warnings.push({
          ingress: label,
          reason: ingressEventReasons.IngressConflict,
          message: `Ingress ${label} claims ${describeRoute(route)} in ${route.field}, which Ingress ${holder} (created earlier) already serves; that path is left out and the rest of ${label} is served. Use another host or path, or remove it from ${holder} first.`,
        });
        continue;
      }
      const backend = backendName(ingress.namespace, route.service);
      if (!backends.has(backend)) {
        backends.set(
          backend,
          kept === undefined
            ? buildBackend(snapshot, ingress.namespace, route.service)
            : kept.build(snapshot, ingress.namespace, route.service),
        );
      }
      used.add(backend);
      const host = servedHost(route.host);
      const path = servedPath(route.pathType, route.path);
      routes.set(key, {
        host,
        pathType: route.pathType,
        path,
        exactKey: `${host}${path}`,
        prefixKey: `${host}${path === '/' ? '/' : `${path}/`}`,
        backend,
        ingress: label,
      });
    }
    for (const name of [...used].sort(compare)) {
      for (const problem of backends.get(name)?.problems ?? []) {
        warnings.push({ ingress: label, ...problem });
      }
    }
  }
  return {
    routes: [...routes.values()].sort(routeOrder),
    backends: [...backends.values()]
      .map(({ backend }) => backend)
      .sort((a, b) => compare(a.name, b.name)),
  };
}

/** Builds the model; `ingresses` in the snapshot are already filtered to our class. */
export function buildRoutingModel(snapshot: ClusterSnapshot, options: ModelOptions): ModelResult {
  const excluded: ExcludedIngress[] = [];
  const warnings: ModelWarning[] = [];
  const valid: ValidIngress[] = [];
  for (const view of [...snapshot.ingresses].sort(olderFirst)) {
    const checked = checkedIngress(view);
    if (isProblem(checked)) {
      excluded.push({ namespace: view.namespace, name: view.name, ...checked });
    } else {
      valid.push(checked);
    }
  }
  const { routes, backends } = claimRoutes(valid, snapshot, warnings, options.keptBackends);
  const tls = buildCertificates(valid, snapshot, options);
  const byName = (a: ValidIngress, b: ValidIngress): number =>
    compare(objectKey(a.namespace, a.name), objectKey(b.namespace, b.name));
  return {
    model: {
      routes,
      ...mapEntries(routes),
      backends,
      certificates: tls.certificates,
      defaultCertificate: tls.defaultCertificate,
      ingresses: [...valid].sort(byName).map((ingress) => ({
        namespace: ingress.namespace,
        name: ingress.name,
        annotations: ingress.annotations,
      })),
    },
    files: tls.files,
    excluded: [...excluded].sort((a, b) =>
      compare(objectKey(a.namespace, a.name), objectKey(b.namespace, b.name)),
    ),
    warnings: [...warnings, ...tls.warnings],
  };
}
