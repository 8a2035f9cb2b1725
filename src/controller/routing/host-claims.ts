/**
 * The part of each Ingress its hosts' owners admit (host-ownership.ts): an Ingress naming a host
 * that another namespace owns and does not share is served without that host's rules and TLS
 * hosts, with a HostConflict warning naming the owner. An Ingress with no such host is served
 * as it is (the same object), so the claims (route-claims.ts) see most Ingresses unchanged.
 *
 * HostClaims is built for a state and edited by the Ingresses that went and came: an owner that
 * goes or comes changes what the other Ingresses naming its hosts may serve, and the edit
 * returns their served forms before and after, for the claims to edit in turn.
 */
import { objectKey } from './cluster-snapshot.ts';
import { type ModelWarning, ingressEventReasons } from './ingress-event-reasons.ts';
import { annotationPrefix } from '../../validation/ingress-checks.ts';
import { type ForeignHost, HostOwners } from '../../validation/host-ownership.ts';
import { hostSharingAnnotation } from '../../validation/host-sharing.ts';
import { servedHost } from '../../validation/ingress-claims.ts';
import type { ValidIngress } from '../../validation/validate-ingress.ts';

/** An Ingress with hosts another namespace owns: what is served of it, and why not the rest. */
interface Limited {
  /** The foreign hosts, for telling whether a later state changes them. */
  readonly hosts: string;
  /** The foreign hosts with their owners, whom the warnings name. */
  readonly owners: string;
  readonly served: ValidIngress;
  readonly warnings: readonly ModelWarning[];
}

function hostConflict(ingress: ValidIngress, foreign: ForeignHost): ModelWarning {
  const label = objectKey(ingress.namespace, ingress.name);
  const owner = objectKey(foreign.owner.namespace, foreign.owner.name);
  const host =
    foreign.host === '*' ? 'rules without a host (the catch-all)' : `host ${foreign.host}`;
  return {
    ingress: label,
    reason: ingressEventReasons.HostConflict,
    message: `Ingress ${label} names ${host} in ${foreign.field}, which namespace ${foreign.owner.namespace} owns (Ingress ${owner} named it first); its rules and TLS hosts for it are left out and the rest of ${label} is served. Use another host, or have ${foreign.owner.namespace} add ${ingress.namespace} to the ${annotationPrefix}${hostSharingAnnotation} annotation of ${owner}.`,
  };
}

/** `ingress` without `hosts`: its rules and TLS entries for them left out. */
function withoutHosts(ingress: ValidIngress, hosts: ReadonlySet<string>): ValidIngress {
  const ruleHosts = [
    ...new Set(ingress.routes.map((route) => route.host).filter((host) => host !== '')),
  ];
  return {
    ...ingress,
    routes: ingress.routes.filter((route) => !hosts.has(servedHost(route.host))),
    // A TLS entry without hosts serves the rule hosts: they are written out, so one left out
    // of the rules is left out of the entry too, and an entry left with none goes.
    tls: ingress.tls
      .map((entry) => ({
        ...entry,
        hosts: (entry.hosts.length > 0 ? entry.hosts : ruleHosts).filter(
          (host) => !hosts.has(host),
        ),
      }))
      .filter((entry) => entry.hosts.length > 0),
  };
}

export class HostClaims {
  readonly #owners: HostOwners;
  /** The Ingresses that name a foreign host. */
  readonly #limited = new Map<ValidIngress, Limited>();

  constructor(valid: readonly ValidIngress[]) {
    this.#owners = new HostOwners(valid);
    for (const ingress of valid) this.#limit(ingress);
  }

  /** What is served of `ingress` (itself when it names no foreign host). */
  served(ingress: ValidIngress): ValidIngress {
    return this.#limited.get(ingress)?.served ?? ingress;
  }

  /** Whether no Ingress names a foreign host. */
  get none(): boolean {
    return this.#limited.size === 0;
  }

  /** The HostConflict warnings of `ingress`. */
  warningsOf(ingress: ValidIngress): readonly ModelWarning[] {
    return this.#limited.get(ingress)?.warnings ?? [];
  }

  /** Records what is served of `ingress` under the current owners; returns it. */
  #limit(ingress: ValidIngress): ValidIngress {
    const foreign = this.#owners.foreign(ingress);
    if (foreign.length === 0) {
      this.#limited.delete(ingress);
      return ingress;
    }
    const hosts = foreign.map(({ host }) => host).join(' ');
    const owners = foreign
      .map(({ host, owner }) => `${host} ${objectKey(owner.namespace, owner.name)}`)
      .join(' ');
    const kept = this.#limited.get(ingress);
    if (kept?.owners === owners) return kept.served;
    // The same hosts left out keep the same served form, whoever owns them now.
    const limited: Limited = {
      hosts,
      owners,
      served:
        kept?.hosts === hosts
          ? kept.served
          : withoutHosts(ingress, new Set(foreign.map(({ host }) => host))),
      warnings: foreign.map((each) => hostConflict(ingress, each)),
    };
    this.#limited.set(ingress, limited);
    return limited.served;
  }

  /**
   * Edits the state by the Ingresses that went (`removed`, or their old check) and came
   * (`added`); returns the served forms the claims lose and gain: those of `removed` and
   * `added`, and of every other Ingress whose foreign hosts changed with them.
   */
  edit(
    removed: readonly ValidIngress[],
    added: readonly ValidIngress[],
  ): { readonly removed: ValidIngress[]; readonly added: ValidIngress[] } {
    const servedRemoved = removed.map((ingress) => this.served(ingress));
    for (const ingress of removed) this.#limited.delete(ingress);
    const affected = this.#owners.edit(removed, added);
    const servedAdded = added.map((ingress) => this.#limit(ingress));
    for (const ingress of affected) {
      const before = this.served(ingress);
      const after = this.#limit(ingress);
      if (before === after) continue;
      servedRemoved.push(before);
      servedAdded.push(after);
    }
    return { removed: servedRemoved, added: servedAdded };
  }
}
