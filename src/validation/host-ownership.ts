/**
 * Who may serve a host across namespaces. Claims of a host and path (ingress-claims.ts) alone
 * let a newer Ingress of another namespace add `Exact /` or a longer prefix on a host someone
 * else serves, and take those requests — over HTTPS with the victim's certificate, enough to
 * answer an ACME HTTP-01 challenge for the victim's domain. So a host is owned by a namespace:
 * the namespace of the oldest Ingress (olderFirst) that names it, in a rule or a TLS entry
 * (rules without a host name `*`, the catch-all). Ingresses of other namespaces are served on
 * that host only when the owner shares it: an Ingress of the owning namespace that names the
 * host lists their namespace, or `*` for every namespace, in the annotation
 * `haproxy-haptic.org/host-shared-with`. Ingresses of one namespace share their hosts as before;
 * between the Ingresses a host admits, the oldest claim of a path still wins.
 *
 * Pure: the same Ingresses give the same owners whatever order they come in. HostOwners is
 * built once for a state and edited by the Ingresses that went and came, so an admission
 * review looks again only at the hosts the reviewed Ingress names.
 */
import { hostSharingAnnotation, sharingEntries } from './host-sharing.ts';
import { olderFirst, servedHost } from './ingress-claims.ts';
import type { ValidIngress } from './validate-ingress.ts';

/** The namespaces an Ingress shares its hosts with (`*`: all). */
function sharedWith(ingress: ValidIngress): readonly string[] {
  const value = ingress.annotations[hostSharingAnnotation];
  return value === undefined ? [] : sharingEntries(value);
}

/** A host an Ingress names, and the first field naming it. */
export interface NamedHost {
  readonly host: string;
  readonly field: string;
}

const namedOf = new WeakMap<ValidIngress, readonly NamedHost[]>();

/** The hosts an Ingress names (rules first, then TLS entries), once each, `*` for no host. */
export function namedHosts(ingress: ValidIngress): readonly NamedHost[] {
  let named = namedOf.get(ingress);
  if (named === undefined) {
    const fields = new Map<string, string>();
    for (const route of ingress.routes) {
      const host = servedHost(route.host);
      if (!fields.has(host)) fields.set(host, route.field);
    }
    for (const entry of ingress.tls) {
      for (const host of entry.hosts) if (!fields.has(host)) fields.set(host, entry.field);
    }
    named = [...fields].map(([host, field]) => ({ host, field }));
    namedOf.set(ingress, named);
  }
  return named;
}

/** A host of an Ingress that another namespace owns and does not share with it. */
export interface ForeignHost extends NamedHost {
  /** The oldest Ingress naming the host: its namespace owns it. */
  readonly owner: ValidIngress;
}

export class HostOwners {
  /** The Ingresses naming each host, oldest first. */
  readonly #naming = new Map<string, ValidIngress[]>();

  constructor(ingresses: readonly ValidIngress[]) {
    for (const ingress of [...ingresses].sort(olderFirst)) {
      for (const { host } of namedHosts(ingress)) {
        const list = this.#naming.get(host);
        if (list === undefined) this.#naming.set(host, [ingress]);
        else list.push(ingress);
      }
    }
  }

  /** The oldest Ingress naming `host`, whose namespace owns it. */
  owner(host: string): ValidIngress | undefined {
    return this.#naming.get(host)?.[0];
  }

  /** Whether an Ingress of `namespace` is served on `host`: nobody else owns it, or the owner shares it. */
  admits(host: string, namespace: string): boolean {
    return this.#refusal(host, namespace) === undefined;
  }

  /** The owner that keeps `namespace` off `host`, if any. */
  #refusal(host: string, namespace: string): ValidIngress | undefined {
    const list = this.#naming.get(host);
    const owner = list?.[0];
    if (list === undefined || owner === undefined || owner.namespace === namespace)
      return undefined;
    for (const ingress of list) {
      if (ingress.namespace !== owner.namespace) continue;
      const shares = sharedWith(ingress);
      if (shares.includes('*') || shares.includes(namespace)) return undefined;
    }
    return owner;
  }

  /** The hosts `ingress` names that another namespace owns and does not share with it. */
  foreign(ingress: ValidIngress): ForeignHost[] {
    const foreign: ForeignHost[] = [];
    for (const named of namedHosts(ingress)) {
      const owner = this.#refusal(named.host, ingress.namespace);
      if (owner !== undefined) foreign.push({ ...named, owner });
    }
    return foreign;
  }

  /**
   * Who may serve `host`, as a value that differs whenever some Ingress's answer would, or the
   * owning Ingress (which warnings name) changes.
   */
  #policy(host: string): string {
    const list = this.#naming.get(host);
    const owner = list?.[0];
    if (list === undefined || owner === undefined) return '';
    const shares = new Set<string>();
    for (const ingress of list) {
      if (ingress.namespace === owner.namespace)
        for (const each of sharedWith(ingress)) shares.add(each);
    }
    return [owner.namespace, owner.name, ...[...shares].sort()].join(' ');
  }

  /**
   * Edits the owners from one state's Ingresses to the next: `removed` went (or changed: their
   * old check), `added` came. Returns the Ingresses, besides `added`, whose foreign hosts may
   * have changed: those naming a host whose owning Ingress or sharing changed.
   */
  edit(removed: readonly ValidIngress[], added: readonly ValidIngress[]): Set<ValidIngress> {
    const touched = new Set<string>();
    for (const ingress of [...removed, ...added]) {
      for (const { host } of namedHosts(ingress)) touched.add(host);
    }
    const before = new Map<string, string>();
    for (const host of touched) before.set(host, this.#policy(host));
    const gone = new Set(removed);
    for (const ingress of removed) {
      for (const { host } of namedHosts(ingress)) {
        const list = this.#naming.get(host)?.filter((each) => !gone.has(each)) ?? [];
        if (list.length === 0) this.#naming.delete(host);
        else this.#naming.set(host, list);
      }
    }
    for (const ingress of added) {
      for (const { host } of namedHosts(ingress)) {
        const list = this.#naming.get(host);
        if (list === undefined) {
          this.#naming.set(host, [ingress]);
          continue;
        }
        if (list.includes(ingress)) continue;
        const at = list.findIndex((other) => olderFirst(ingress, other) < 0);
        list.splice(at < 0 ? list.length : at, 0, ingress);
      }
    }
    const affected = new Set<ValidIngress>();
    const fresh = new Set(added);
    for (const host of touched) {
      if (before.get(host) === this.#policy(host)) continue;
      for (const ingress of this.#naming.get(host) ?? []) {
        if (!fresh.has(ingress)) affected.add(ingress);
      }
    }
    return affected;
  }
}

/**
 * The hosts a proposed Ingress would newly name that another namespace owns and does not share
 * with it: admission denies them, so a tenant cannot take a host over by creating an Ingress,
 * nor by growing an old one (which, being older, would otherwise become the owner). Hosts its
 * stored version (`previous`, undefined on create) already named stay allowed, so an Ingress
 * left out of a host can always be fixed. `owners`: of the state the Ingress is proposed in.
 */
export function newForeignHosts(
  proposed: ValidIngress,
  previous: ValidIngress | undefined,
  owners: HostOwners,
): ForeignHost[] {
  const held = new Set(previous === undefined ? [] : namedHosts(previous).map(({ host }) => host));
  return owners.foreign(proposed).filter(({ host }) => !held.has(host));
}
