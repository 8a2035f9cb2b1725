/**
 * Admission for the routing objects `haptic run` renders from: Ingresses
 * (networking.k8s.io/v1) and HAProxyTemplateConfigs (haproxy-haptic.org/v1alpha1). A create or
 * update is rendered against the current cluster state and checked like a reconcile would
 * (value checks, lint, sandboxed haproxy -c); deletes are allowed. The reviewing itself is
 * the controller's (it owns the caches and templates); this layer only routes.
 */
import type { ValidationReport } from '../validation/index.ts';
import type { KindRoutes, ObjectAdmissionValidator } from './object-validators.ts';

/** Reviews proposed routing objects against the controller's current state. */
export interface RoutingReviewer {
  reviewIngress(next: unknown, namespace: string): Promise<ValidationReport>;
  reviewTemplateConfig(next: unknown, namespace: string): Promise<ValidationReport>;
}

const allowDelete = (): Promise<ValidationReport> =>
  Promise.resolve({ allowed: true, findings: [] });

function validator(
  review: (next: unknown, namespace: string) => Promise<ValidationReport>,
): ObjectAdmissionValidator {
  return {
    validateCreate: (next, namespace) => review(next, namespace),
    validateUpdate: (_old, next, namespace) => review(next, namespace),
    validateDelete: allowDelete,
  };
}

export function routingKindRoutes(reviewer: RoutingReviewer): KindRoutes {
  const ingress = validator((next, namespace) => reviewer.reviewIngress(next, namespace));
  const templateConfig = validator((next, namespace) =>
    reviewer.reviewTemplateConfig(next, namespace),
  );
  return (kind) => {
    if (kind.group === 'networking.k8s.io' && kind.kind === 'Ingress') return ingress;
    if (kind.group === 'haproxy-haptic.org' && kind.kind === 'HAProxyTemplateConfig') {
      return templateConfig;
    }
    return undefined;
  };
}
