/**
 * Who serves a contested host and path. Ingresses of every namespace share one HAProxy, so
 * two of them may claim the same host, path and path type (or the same TLS host). The rule:
 * the oldest Ingress (metadata.creationTimestamp, then namespace/name) keeps the claim; the
 * newer one loses only that path (its other paths are still served) and is told who holds
 * it. Admission goes further for other namespaces: a write that would newly claim what
 * another namespace's Ingress holds is denied, so a tenant cannot take a host over by
 * creating an Ingress, nor by growing an old one.
 *
 * Pure: the same Ingresses give the same answer whatever order they come in.
 */
import type { PathType } from './ingress-checks.ts';
import type { IngressRoute, ValidIngress } from './validate-ingress.ts';

/** What orders Ingresses by age. */
export interface IngressAge {
  readonly namespace: string;
  readonly name: string;
  readonly createdAt: number | undefined;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Oldest first: creationTimestamp (an Ingress without one, being created, is the newest),
 * then namespace, then name.
 */
export function olderFirst(a: IngressAge, b: IngressAge): number {
  const at = a.createdAt ?? Number.POSITIVE_INFINITY;
  const bt = b.createdAt ?? Number.POSITIVE_INFINITY;
  if (at !== bt) return at < bt ? -1 : 1;
  return compare(a.namespace, b.namespace) || compare(a.name, b.name);
}

/** The path a route matches: Prefix paths without trailing slashes (`/foo/` is `/foo`). */
export function servedPath(pathType: PathType, path: string): string {
  if (pathType !== 'Prefix' || path.length <= 1 || !path.endsWith('/')) return path;
  return path.replace(/\/+$/, '') || '/';
}

/** Hosts as the model writes them: `*` for rules without a host. */
export function servedHost(host: string): string {
  return host === '' ? '*' : host;
}

/** The key two routes contest: host, path type and served path. */
export function routeClaimKey(route: Pick<IngressRoute, 'host' | 'pathType' | 'path'>): string {
  return `${servedHost(route.host)} ${route.pathType} ${servedPath(route.pathType, route.path)}`;
}

/** A route, or a TLS host, that another Ingress already holds. */
export interface ClaimConflict {
  /** The field of the claim in the losing Ingress: `spec.rules[0].http.paths[1]`, `spec.tls[0].hosts`. */
  readonly field: string;
  /** What is claimed, for messages: `host a.example.com, Prefix path /`. */
  readonly claim: string;
  /** `namespace/name` of the Ingress that holds it. */
  readonly holder: string;
}

export function describeRoute(route: Pick<IngressRoute, 'host' | 'pathType' | 'path'>): string {
  const host = route.host === '' ? 'any host' : `host ${route.host}`;
  return `${host}, ${route.pathType} path ${servedPath(route.pathType, route.path)}`;
}

/** The hosts a TLS entry serves: its own list, or (empty list) the Ingress's rule hosts. */
export function tlsHostsOf(ingress: ValidIngress, hosts: readonly string[]): readonly string[] {
  if (hosts.length > 0) return [...new Set(hosts)];
  return [...new Set(ingress.routes.map((route) => route.host).filter((host) => host !== ''))];
}

/**
 * Who claims each host and path, oldest claimant first, among a set of Ingresses: built once
 * for a state and asked for every Ingress proposed against it.
 */
export class ClaimHolders {
  readonly #holders = new Map<string, ValidIngress[]>();

  constructor(ingresses: readonly ValidIngress[]) {
    for (const ingress of [...ingresses].sort(olderFirst)) {
      for (const route of ingress.routes) {
        const key = routeClaimKey(route);
        const list = this.#holders.get(key);
        if (list === undefined) this.#holders.set(key, [ingress]);
        else if (list.at(-1) !== ingress) list.push(ingress);
      }
    }
  }

  /** The oldest Ingress outside `namespace` that claims `key` (routeClaimKey). */
  outside(key: string, namespace: string): ValidIngress | undefined {
    return this.#holders.get(key)?.find((holder) => holder.namespace !== namespace);
  }
}

/**
 * The conflicts a proposed Ingress would create with Ingresses of other namespaces: routes
 * it claims that its stored version (`previous`, undefined on create) did not, and that
 * another namespace's Ingress holds. Claims the stored version already had stay allowed,
 * so an owner can always update its own Ingress, and a loser can always fix its own.
 * `others` (or their ClaimHolders) may include Ingresses of the proposed one's namespace,
 * its stored version too: they hold nothing against it.
 */
export function newCrossNamespaceClaims(
  proposed: ValidIngress,
  previous: ValidIngress | undefined,
  others: readonly ValidIngress[] | ClaimHolders,
): ClaimConflict[] {
  const held = new Set(previous?.routes.map(routeClaimKey) ?? []);
  const holders = others instanceof ClaimHolders ? others : new ClaimHolders(others);
  const conflicts: ClaimConflict[] = [];
  const seen = new Set<string>();
  for (const route of proposed.routes) {
    const key = routeClaimKey(route);
    if (held.has(key) || seen.has(key)) continue;
    const holder = holders.outside(key, proposed.namespace);
    if (holder === undefined) continue;
    seen.add(key);
    conflicts.push({
      field: route.field,
      claim: describeRoute(route),
      holder: `${holder.namespace}/${holder.name}`,
    });
  }
  return conflicts;
}
