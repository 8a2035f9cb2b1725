/**
 * The validating admission webhook: AdmissionReview HTTP plumbing in three layers (HTTP,
 * dispatch, validators) over the shared validator.
 */
export type { AdmissionRequest, AdmissionResponse } from './admission-review.ts';
export { defaultMaxBodyBytes } from './app.ts';
export type { ReviewEvent } from './dispatch.ts';
export { loadEmbeddedChart } from './embedded-chart.ts';
export { type LiveReader, type ReleaseIoOptions, createReleaseIo } from './release-io.ts';
export type { ListenOptions, WebhookServer } from './server.ts';
export {
  type ServingCertificate,
  type ServingCertificateSource,
  type WatchedCertificateSource,
  fixedCertificateSource,
  loadServingCertificate,
  watchServingCertificate,
} from './serving-certificate.ts';
export { type WebhookOptions, createReviewer, defaultDeadlineMs, startWebhook } from './webhook.ts';
export type { KindRoutes, ObjectAdmissionValidator } from './object-validators.ts';
export {
  type RoutingReviewer,
  type TemplateConfigRef,
  routingKindRoutes,
} from './routing-validators.ts';
export { type IdentityOverrides, releaseIdentities } from './release-identities.ts';
