/**
 * The state of the claims on hosts and paths: each key's holder (the oldest Ingress claiming
 * it, olderFirst) and contenders, the backends the won routes use, and each Ingress's
 * warnings (its lost paths, then the problems of its won routes' backends). route-claims.ts
 * fills it from scratch, claim-edits.ts edits it by the Ingresses that went and came.
 */
import type { ClusterSnapshot } from './cluster-snapshot.ts';
import { objectKey } from './cluster-snapshot.ts';
import { type ModelWarning, ingressEventReasons } from './ingress-event-reasons.ts';
import { type BackendResult, KeptBackends, backendVariant, variantName } from './model-backends.ts';
import type { MapEntry, ModelRoute } from './model-types.ts';
import {
  describeRoute,
  routeClaimKey,
  servedHost,
  servedPath,
} from '../../validation/ingress-claims.ts';
import type { IngressRoute, ValidIngress } from '../../validation/validate-ingress.ts';
import { regexLiteral } from '../../annotations/annotation-values.ts';

/** One route an Ingress claims: made once per checked Ingress. */
export interface Candidate {
  readonly key: string;
  readonly source: IngressRoute;
  readonly route: ModelRoute;
}

const candidatesOf = new WeakMap<ValidIngress, readonly Candidate[]>();

export function candidates(ingress: ValidIngress): readonly Candidate[] {
  let list = candidatesOf.get(ingress);
  if (list === undefined) {
    const label = objectKey(ingress.namespace, ingress.name);
    list = ingress.routes.map((route) => {
      const host = servedHost(route.host);
      const path = servedPath(route.pathType, route.path);
      // A canary claims its primary's key apart: it contests other canaries, not the primary.
      const key = routeClaimKey(route);
      return {
        key: ingress.canary === undefined ? key : `${key} canary`,
        source: route,
        route: {
          host,
          pathType: route.pathType,
          path,
          exactKey: `${host}${path}`,
          prefixKey: `${host}${path === '/' ? '/' : `${path}/`}`,
          backend: variantName(ingress.namespace, route.service, route.options),
          ingress: label,
          canary: ingress.canary !== undefined,
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

const regexEntries = new WeakMap<ModelRoute, MapEntry>();

/**
 * A Regex route's regex-map entry: host (a literal) and path regex in one PCRE2 key, matched
 * case-insensitively from the start of `host` + path. The host must end where the path's `/`
 * begins (`(?=/)`: a path like `/?\.victim\.org/.*` or `/x|puter/.*` cannot reach into a
 * longer host), and the path regex sits in a group of its own, so its alternatives (`/a|/b`)
 * stay under the route's host.
 */
export function regexEntry(route: ModelRoute): MapEntry {
  return entryOf(regexEntries, route, `(?i)^${regexLiteral(route.host)}(?=/)(?:${route.path})`);
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

  /** The route that holds `key`: its holder's first candidate for it. */
  wonRoute(key: string): ModelRoute | undefined {
    const holder = this.holders.get(key);
    return holder && candidates(holder).find((candidate) => candidate.key === key)?.route;
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

export function labelOf(ingress: ValidIngress): string {
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
export class BackendSource {
  readonly #snapshot: ClusterSnapshot;
  /** The caller's, or one of this build's own: a Service port's variants share one build. */
  readonly #kept: KeptBackends;
  readonly #earlier: ReadonlyMap<string, BackendResult> | undefined;

  constructor(
    snapshot: ClusterSnapshot,
    kept: KeptBackends | undefined,
    earlier: ReadonlyMap<string, BackendResult> | undefined,
  ) {
    this.#snapshot = snapshot;
    this.#kept = kept ?? new KeptBackends();
    this.#earlier = earlier;
  }

  build(namespace: string, candidate: Candidate): BackendResult {
    const { service, options } = candidate.source;
    const earlier = this.#earlier?.get(candidate.route.backend);
    if (earlier !== undefined) return earlier;
    return backendVariant(this.#kept.build(this.#snapshot, namespace, service), options);
  }
}
