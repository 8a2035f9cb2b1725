/**
 * Each Secret is owned by exactly one certificate provider (default, cert-manager, external).
 * A write or a release configuration that would hand a Secret to another provider is rejected:
 * providers change with new Secret names.
 */
import { validationCodes } from './codes.ts';
import { type Finding, error, secretPath } from './finding.ts';
import type { PlannedSecret } from './release-plan.ts';
import type { SecretObject } from './secret-data.ts';
import { secretLabel } from './secret-data.ts';
import {
  type CertificateProvider,
  type ProviderMarkersSource,
  type SecretProvider,
  describeProvider,
  providerMarkers,
  secretProvider,
} from '../secrets/provider-markers.ts';

export const changeProvidersAdvice =
  'use new Secret names when changing providers, and keep the old Secrets until haptic-controller and haptic-haproxy are ready';

function markersText(metadata: ProviderMarkersSource): string {
  const markers = providerMarkers(metadata);
  return markers.length === 0 ? 'no provider marker' : markers.join(', ');
}

export interface ProviderWriteSubject {
  readonly name: string;
  readonly label: string;
  /** Metadata before the write (absent on create). */
  readonly before: ProviderMarkersSource | undefined;
  readonly after: ProviderMarkersSource;
  /** The provider the release configures for this Secret, when known. */
  readonly configured: CertificateProvider | undefined;
}

/** A write that changes the Secret's provider markers, or gives it another provider than configured. */
export function providerTakeoverOnWrite(subject: ProviderWriteSubject): Finding | undefined {
  const { name, label, before, after, configured } = subject;
  const next = secretProvider(after);
  const path = secretPath(name, 'metadata');
  if (before !== undefined) {
    const previous = secretProvider(before);
    if (previous !== next) {
      return error(
        validationCodes.ProviderTakeover,
        path,
        `Secret ${label} is managed by ${describeProvider(previous)} (${markersText(before)}); this change would make it managed by ${describeProvider(next)} (${markersText(after)}). ` +
          `A provider must not take over another provider's Secret: ${changeProvidersAdvice}.`,
      );
    }
  }
  if (configured !== undefined && next !== configured) {
    return error(
      validationCodes.ProviderTakeover,
      path,
      `Secret ${label} belongs to ${describeProvider(configured)} in this release, but this write marks it for ${describeProvider(next)} (${markersText(after)}). ` +
        `A provider must not take over another provider's Secret: ${changeProvidersAdvice}.`,
    );
  }
  return undefined;
}

/** A release that would manage an existing Secret with another provider than the one that owns it. */
export function providerTakeoverByRelease(
  planned: PlannedSecret,
  live: SecretObject,
): Finding | undefined {
  if (planned.provider === undefined) return undefined;
  const owner: SecretProvider = secretProvider(live);
  if (owner === planned.provider) return undefined;
  return error(
    validationCodes.ProviderTakeover,
    planned.source,
    `${planned.source} names Secret ${secretLabel(live)}, which is managed by ${describeProvider(owner)} (${markersText(live)}); this release would manage it with ${describeProvider(planned.provider)}. ` +
      `A provider must not take over another provider's Secret: ${changeProvidersAdvice}.`,
  );
}
