/**
 * What the routing model tells the owners of Ingresses: one Warning Event per Ingress for the
 * parts not served as written (reasons in ingress-event-reasons.ts), and the counts behind
 * `haptic_ingresses{state}`. Pure.
 */
import type { Problem } from '../../problem.ts';
import {
  type IngressEventReason,
  type ModelWarning,
  ingressEventReasons,
} from './ingress-event-reasons.ts';
import type { ModelResult } from './model-types.ts';

export interface IngressEvent extends Problem<IngressEventReason> {
  readonly namespace: string;
  readonly name: string;
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
