/**
 * The chart's resource names, as chart/templates/_helpers.tpl derives them: `haptic.fullname`,
 * `haptic.suffixedName` and the component names built on them. The validator, the webhook's
 * routes and the identity configuration take every name from here; a property test
 * (test/unit/chart/release-names.test.ts) holds these equal to `helm template` for release
 * names of every length Helm accepts, with and without the name overrides.
 *
 * Strings are measured in UTF-16 code units where the template counts bytes; the values schema
 * and Helm admit only ASCII (DNS labels) in every input, so both agree.
 */
import { createHash } from 'node:crypto';

/** The chart's name (Chart.yaml). */
export const chartName = 'haptic';

/** The longest Kubernetes object name the chart produces (a DNS label). */
export const maxNameLength = 63;

/** The overrides that change the chart's names (values `nameOverride`, `fullnameOverride`). */
export interface NameOverrides {
  /** '' when unset. */
  readonly nameOverride: string;
  /** '' when unset. */
  readonly fullnameOverride: string;
}

/** sprig `trunc n | trimSuffix "-"` (n is never negative here). */
function truncate(name: string, length: number): string {
  const cut = name.slice(0, length);
  return cut.endsWith('-') ? cut.slice(0, -1) : cut;
}

/** `haptic.fullname`: the prefix of every component name. */
export function releaseFullname(release: string, overrides: NameOverrides): string {
  if (overrides.fullnameOverride !== '') return truncate(overrides.fullnameOverride, maxNameLength);
  const name = overrides.nameOverride === '' ? chartName : overrides.nameOverride;
  const full = release.includes(name) ? release : `${release}-${name}`;
  return truncate(full, maxNameLength);
}

/**
 * `haptic.suffixedName`: `<prefix>-<suffix>` in at most `max` characters; when longer, the
 * prefix is shortened and followed by the first 8 hex digits of its SHA-256, the suffix kept.
 */
export function suffixedName(prefix: string, suffix: string, max: number): string {
  if (prefix.length + suffix.length + 1 <= max) return `${prefix}-${suffix}`;
  const short = truncate(prefix, max - (suffix.length + 10));
  const hash = createHash('sha256').update(prefix).digest('hex').slice(0, 8);
  return `${short}-${hash}-${suffix}`;
}

/** `haptic.componentName`: `<fullname>-<suffix>`, at most 63 characters. */
export function componentName(fullname: string, suffix: string): string {
  return suffixedName(fullname, suffix, maxNameLength);
}

/**
 * The pre-rollout Job (`haptic.preRollout.fullname`) and its values Secret
 * (`haptic.preRollout.valuesSecretName`): `<release>-<chart>-…` whatever the overrides.
 */
export function preRolloutNames(release: string): { job: string; valuesSecret: string } {
  const prefix = `${release}-${chartName}`;
  return {
    job: suffixedName(prefix, 'pre-rollout', maxNameLength),
    valuesSecret: suffixedName(prefix, 'pre-rollout-values', maxNameLength),
  };
}
