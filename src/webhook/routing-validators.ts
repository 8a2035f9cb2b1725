/**
 * Admission for the routing objects `haptic run` renders from: Ingresses
 * (networking.k8s.io/v1) and the one HAProxyTemplateConfig (haproxy-haptic.org/v1alpha1) the
 * controller is configured with. A create or update is rendered (an Ingress against the
 * current cluster state, the HAProxyTemplateConfig against an empty cluster) and checked like a
 * reconcile would (value checks, lint, sandboxed haproxy -c); deletes are allowed. Any other HAProxyTemplateConfig is allowed untouched: the controller never
 * renders it, so reviewing it would only let whoever reaches the webhook have arbitrary
 * templates rendered and checked. The reviewing itself is the controller's (it owns the caches
 * and templates); this layer only routes.
 */
import type { ValidationReport } from '../validation/index.ts';
import type { ReviewContext } from './review-context.ts';
import {
  type KindRoutes,
  type ObjectAdmissionValidator,
  routeByKind,
} from './object-validators.ts';

/**
 * Reviews proposed routing objects: an Ingress against the controller's current state, a
 * HAProxyTemplateConfig against an empty cluster.
 */
export interface RoutingReviewer {
  reviewIngress(next: unknown, namespace: string, review: ReviewContext): Promise<ValidationReport>;
  reviewTemplateConfig(
    next: unknown,
    namespace: string,
    review: ReviewContext,
  ): Promise<ValidationReport>;
}

const allowDelete = (): Promise<ValidationReport> =>
  Promise.resolve({ allowed: true, findings: [] });

function validator(
  check: (next: unknown, namespace: string, review: ReviewContext) => Promise<ValidationReport>,
): ObjectAdmissionValidator {
  return {
    validateCreate: (next, namespace, review) => check(next, namespace, review),
    validateUpdate: (_old, next, namespace, review) => check(next, namespace, review),
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
  const ingress = validator((next, namespace, review) =>
    reviewer.reviewIngress(next, namespace, review),
  );
  const ours = validator((next, namespace, review) =>
    reviewer.reviewTemplateConfig(next, namespace, review),
  );
  return routeByKind({
    'networking.k8s.io/Ingress': () => ingress,
    'haproxy-haptic.org/HAProxyTemplateConfig': (namespace, name) =>
      namespace === templateConfig.namespace && name === templateConfig.name ? ours : undefined,
  });
}
