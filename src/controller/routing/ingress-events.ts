/**
 * What the routing model tells the owners of Ingresses: the reasons a part of an Ingress is
 * not served as written, one Warning Event per Ingress, and the counts behind
 * `haptic_ingresses{state}`. Pure.
 */
import type { ModelResult } from './routing-model.ts';

/** Reasons of the Warning Events on Ingresses, most serious first. */
export const ingressEventReasons = {
  /** The Ingress has a value the controller refuses; it is left out whole. */
  IngressExcluded: 'IngressExcluded',
  /** A host is owned by another namespace that does not share it; the Ingress's part for it is left out. */
  HostConflict: 'HostConflict',
  /** A path or TLS host is held by an older Ingress; that part is left out. */
  IngressConflict: 'IngressConflict',
  /** A TLS Secret HAProxy would not load (key type or size, signature, pair, expiry); its hosts get the default certificate. */
  TLSSecretInvalid: 'TLSSecretInvalid',
  /** A TLS entry names no host and the Ingress has no rule hosts; its certificate is not used. */
  TLSHostsMissing: 'TLSHostsMissing',
  /** A namespace, or all together, would go over a budget of server slots or certificate bytes; the newest objects are left out. */
  BudgetExceeded: 'BudgetExceeded',
  /** A backend endpoint points at an address HAProxy may not use, FQDN slices are turned off, or a Service has more endpoints than a backend serves. */
  EndpointRefused: 'EndpointRefused',
  /** A TLS Secret does not exist (yet); its hosts get the default certificate. */
  TLSSecretMissing: 'TLSSecretMissing',
  /** An FQDN endpoint does not resolve; it is left out until it does. */
  EndpointUnresolved: 'EndpointUnresolved',
} as const;

export type IngressEventReason = (typeof ingressEventReasons)[keyof typeof ingressEventReasons];

/** A part of an Ingress that is not served as written (the Ingress itself still is). */
export interface ModelWarning {
  /** `namespace/name` of the Ingress; absent for controller-wide problems (default certificate). */
  readonly ingress?: string;
  readonly reason: Exclude<IngressEventReason, 'IngressExcluded'>;
  /** A full sentence naming the object and the fix. */
  readonly message: string;
}

export interface IngressEvent {
  readonly namespace: string;
  readonly name: string;
  readonly reason: IngressEventReason;
  readonly message: string;
}

const rank: readonly IngressEventReason[] = Object.values(ingressEventReasons);

function split(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * One Event per Ingress (an object keeps one current Event, so several would replace each
 * other on every reconcile): the most serious reason, and every message of the Ingress.
 */
export function ingressEvents(result: Pick<ModelResult, 'excluded' | 'warnings'>): IngressEvent[] {
  const events: IngressEvent[] = result.excluded.map((entry) => ({
    namespace: entry.namespace,
    name: entry.name,
    reason: ingressEventReasons.IngressExcluded,
    message: `${entry.message} The Ingress is left out of the HAProxy configuration until it is fixed.`,
  }));
  const byIngress = new Map<string, ModelWarning[]>();
  for (const warning of result.warnings) {
    if (warning.ingress === undefined) continue;
    byIngress.set(warning.ingress, [...(byIngress.get(warning.ingress) ?? []), warning]);
  }
  for (const [key, list] of byIngress) {
    const reason = list
      .map((warning) => warning.reason)
      .reduce((a, b) => (rank.indexOf(b) < rank.indexOf(a) ? b : a));
    const message = [...new Set(list.map((warning) => warning.message))].join(' ');
    events.push({ ...split(key), reason, message });
  }
  return events;
}

const conflicts: ReadonlySet<IngressEventReason> = new Set([
  ingressEventReasons.HostConflict,
  ingressEventReasons.IngressConflict,
]);

/** haptic_ingresses{state}: served as written, served in part (conflicts), or excluded. */
export function ingressStates(
  result: Pick<ModelResult, 'model' | 'excluded' | 'warnings'>,
): Readonly<Record<'served' | 'conflicting' | 'excluded', number>> {
  const conflicting = new Set(
    result.warnings
      .filter((warning) => conflicts.has(warning.reason))
      .map((warning) => warning.ingress),
  ).size;
  return {
    served: result.model.ingresses.length - conflicting,
    conflicting,
    excluded: result.excluded.length,
  };
}
