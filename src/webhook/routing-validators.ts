/**
 * Admission for the routing objects `haptic run` renders from: Ingresses
 * (networking.k8s.io/v1) and the one HAProxyTemplateConfig (haproxy-haptic.org/v1alpha1) the
 * controller is configured with. A create or update is rendered against the current cluster
 * state and checked like a reconcile would (value checks, lint, sandboxed haproxy -c); deletes
 * are allowed. Any other HAProxyTemplateConfig is allowed untouched: the controller never
 * renders it, so reviewing it would only let whoever reaches the webhook have arbitrary
 * templates rendered and checked. The reviewing itself is the controller's (it owns the caches
 * and templates); this layer only routes.
 */
import type { ValidationReport } from '../validation/index.ts';
import {
  type KindRoutes,
  type ObjectAdmissionValidator,
  routeByKind,
} from './object-validators.ts';

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

/** The HAProxyTemplateConfig a controller renders (`--template-config` in `--namespace`). */
export interface TemplateConfigRef {
  readonly namespace: string;
  readonly name: string;
}

export function routingKindRoutes(
  reviewer: RoutingReviewer,
  templateConfig: TemplateConfigRef,
): KindRoutes {
  const ingress = validator((next, namespace) => reviewer.reviewIngress(next, namespace));
  const ours = validator((next, namespace) => reviewer.reviewTemplateConfig(next, namespace));
  return routeByKind({
    'networking.k8s.io/Ingress': () => ingress,
    'haproxy-haptic.org/HAProxyTemplateConfig': (namespace, name) =>
      namespace === templateConfig.namespace && name === templateConfig.name ? ours : undefined,
  });
}
