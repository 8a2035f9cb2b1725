/**
 * Which certificate provider owns a Secret, from the Secret's own markers. The one place that
 * decides it: the validator (release and Secret admission) and the renewal Job both import it.
 *
 * - `default`: the renewal Job marks every Secret it writes with the label
 *   `haptic.haproxy.org/certificate-provider: default`.
 * - `cert-manager`: cert-manager annotates the Secrets it writes with the Certificate and
 *   issuer that own them (`cert-manager.io/certificate-name`, `cert-manager.io/issuer-name`, ...).
 * - `external`: neither marker; someone else (an operator, a secret manager) owns it.
 * - `conflicting`: markers of both providers; nobody may manage it until one is removed.
 */

/** The label the default provider puts on every Secret it writes. */
export const certificateProviderLabel = 'haptic.haproxy.org/certificate-provider';

/** Value of {@link certificateProviderLabel} on the default provider's Secrets. */
export const defaultProviderLabelValue = 'default';

/**
 * cert-manager's ownership annotations on the Secrets it issues into. Annotations it uses for
 * other purposes (CA injection, `allow-direct-injection`) do not make a Secret its own.
 */
export const certManagerOwnerAnnotations = [
  'cert-manager.io/certificate-name',
  'cert-manager.io/issuer-name',
  'cert-manager.io/issuer-kind',
  'cert-manager.io/issuer-group',
] as const;

export type CertificateProvider = 'default' | 'cert-manager' | 'external';

export type SecretProvider = CertificateProvider | 'conflicting';

/** The metadata the classification reads. */
export interface ProviderMarkersSource {
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}

/** The provider markers a Secret carries, as `label k=v` / `annotation k` phrases. */
export function providerMarkers(metadata: ProviderMarkersSource): string[] {
  const markers: string[] = [];
  const label = metadata.labels?.[certificateProviderLabel];
  if (label === defaultProviderLabelValue) {
    markers.push(`label ${certificateProviderLabel}=${defaultProviderLabelValue}`);
  }
  for (const key of certManagerOwnerAnnotations) {
    if (metadata.annotations?.[key] !== undefined) markers.push(`annotation ${key}`);
  }
  return markers;
}

/** The provider that owns a Secret with this metadata. */
export function secretProvider(metadata: ProviderMarkersSource): SecretProvider {
  const byDefault = metadata.labels?.[certificateProviderLabel] === defaultProviderLabelValue;
  const byCertManager = certManagerOwnerAnnotations.some(
    (key) => metadata.annotations?.[key] !== undefined,
  );
  if (byDefault && byCertManager) return 'conflicting';
  if (byDefault) return 'default';
  if (byCertManager) return 'cert-manager';
  return 'external';
}

/** How messages name a provider. */
export function describeProvider(provider: SecretProvider): string {
  switch (provider) {
    case 'default':
      return 'the default provider (the renewal Job)';
    case 'cert-manager':
      return 'cert-manager';
    case 'external':
      return 'an external owner';
    case 'conflicting':
      return 'both the default provider and cert-manager';
  }
}
