/**
 * The shared validator: pure rules over (values, rendered objects, live state, versions) →
 * findings. `validateRelease` serves the pre-rollout Job and the webhook's values Secret;
 * `validateSecretWrite` serves the webhook's identity and issuer Secrets.
 */
export { type ValidationCode, validationCodes } from './codes.ts';
export { type Finding, type Severity, type ValidationReport, hasErrors } from './finding.ts';
export type { LiveState } from './live-rules.ts';
export {
  type AgentTlsProvider,
  type PlannedSecret,
  type ReleasePlan,
  planRelease,
} from './release-plan.ts';
export { preRolloutNames } from './chart-names.ts';
export { readReleaseValues } from './release-values.ts';
export type { RenderedObjectView } from './render-rules.ts';
export { type SecretObject, readSecretObject, secretLabel } from './secret-data.ts';
export {
  type EmbeddedChart,
  type LiveReads,
  type ReleaseIo,
  type ReleaseRequest,
  validateRelease,
} from './validate-release.ts';
export {
  type AgentIdentityConfig,
  type SecretWriteOperation,
  type SecretWriteRequest,
  type SecretWriteRole,
  secretWriteRole,
  validateSecretWrite,
} from './validate-secret-write.ts';
export { type Values, coalesceValues, mergeValueLayers } from './values-merge.ts';
export { type ValuesSchemaCheck, compileValuesSchema } from './values-schema.ts';
