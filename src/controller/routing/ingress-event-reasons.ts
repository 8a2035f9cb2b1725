/**
 * Why a part of an Ingress is not served as written: the reasons of the Warning Events the
 * controller posts on Ingresses, most serious first, and the warning the routing model gives
 * for each part it leaves out. Kubernetes Event reasons: a contract with operators' alerts.
 */
import type { Problem } from '../../problem.ts';
import { annotationReasons } from '../../annotations/ingress-options.ts';

/** Reasons of the Warning Events on Ingresses, most serious first. */
export const ingressEventReasons = {
  /** The Ingress has a value the controller refuses; it is left out whole. */
  IngressExcluded: 'IngressExcluded',
  /** A snippet or authentication annotation; the Ingress's routes are left out. */
  AnnotationRefused: annotationReasons.AnnotationRefused,
  /** An annotation's value (or a regex path) does not parse; the routes it concerns are left out. */
  AnnotationInvalid: annotationReasons.AnnotationInvalid,
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
  /** A canary Ingress's host and path is served by no other Ingress; that path is not served. */
  CanaryWithoutPrimary: 'CanaryWithoutPrimary',
  /** A TLS Secret does not exist (yet); its hosts get the default certificate. */
  TLSSecretMissing: 'TLSSecretMissing',
  /** An FQDN endpoint does not resolve; it is left out until it does. */
  EndpointUnresolved: 'EndpointUnresolved',
  /** Annotations of ingress-nginx's or HAProxy's prefix this controller does not read; served without them. */
  AnnotationIgnored: annotationReasons.AnnotationIgnored,
} as const;

export type IngressEventReason = (typeof ingressEventReasons)[keyof typeof ingressEventReasons];

/** A part of an Ingress that is not served as written (the Ingress itself still is). */
export interface ModelWarning extends Problem<Exclude<IngressEventReason, 'IngressExcluded'>> {
  /** `namespace/name` of the Ingress; absent for controller-wide problems (default certificate). */
  readonly ingress?: string;
}
