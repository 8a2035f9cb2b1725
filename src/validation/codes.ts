/**
 * Codes of the shared validator's findings (pre-rollout Job and admission webhook alike). Each
 * names the state found; the finding's message says what to do about it.
 */
export const validationCodes = {
  // Version guard.

  /** The image's embedded chart is not the chart version being installed. */
  ChartVersionMismatch: 'ChartVersionMismatch',
  /** No expected chart version was given, so the version guard did not run (warning). */
  ChartVersionUnchecked: 'ChartVersionUnchecked',

  // Values: syntax, schema and the chart's relations between keys.

  /** A values file or the values Secret is not a YAML map. */
  ValuesUnparsable: 'ValuesUnparsable',
  /** values.schema.json rejects a key (unknown key, wrong type, out of range). */
  ValuesSchemaViolation: 'ValuesSchemaViolation',
  /** Legacy Basic authentication without credentials.existingSecret. */
  LegacyCredentialsMissing: 'LegacyCredentialsMissing',
  /** External identities (managed: false) without serverSecretName or clientSecretName. */
  ExternalSecretNameMissing: 'ExternalSecretNameMissing',
  /** Both external identities and cert-manager are selected for the agent TLS. */
  AgentProviderConflict: 'AgentProviderConflict',
  /** certManager.createIssuer is true but an issuerRef.name is given. */
  IssuerRefConflict: 'IssuerRefConflict',
  /** certManager.createIssuer is false and issuerRef lacks name, kind or group. */
  IssuerRefIncomplete: 'IssuerRefIncomplete',
  /** The agent server name equals the controller client name. */
  PeerNamesEqual: 'PeerNamesEqual',
  /** certValidityDays is not a whole number from 1 to 3650. */
  CertValidityOutOfRange: 'CertValidityOutOfRange',
  /** controller.webhook.caBundle is set together with cert-manager. */
  WebhookCaBundleConflict: 'WebhookCaBundleConflict',
  /** controller.webhook.caBundle is set without controller.webhook.secretName. */
  WebhookSecretNameMissing: 'WebhookSecretNameMissing',
  /** controller.webhook.caBundle is not a base64-encoded PEM certificate bundle. */
  WebhookCaBundleInvalid: 'WebhookCaBundleInvalid',
  /** An external controller.webhook.secretName without caBundle. */
  WebhookCaBundleMissing: 'WebhookCaBundleMissing',
  /** Two value keys name the same Secret. */
  SecretNameShared: 'SecretNameShared',

  // Rendering.

  /** helm rejected the values while rendering the embedded chart. */
  ChartRenderRejected: 'ChartRenderRejected',
  /** The rendered chart mounts other Secrets than the validator checked (a defect). */
  ChartRenderMismatch: 'ChartRenderMismatch',

  // Live state.

  /** Live checks did not run (`--offline`) (warning). */
  LiveChecksSkipped: 'LiveChecksSkipped',
  /** credentials.existingSecret names a Secret that does not exist. */
  CredentialsSecretMissing: 'CredentialsSecretMissing',
  /** The credentials Secret lacks dataplane_username or dataplane_password. */
  CredentialsSecretIncomplete: 'CredentialsSecretIncomplete',
  /** A Secret owned by one certificate provider would be managed by another. */
  ProviderTakeover: 'ProviderTakeover',
  /** An externally supplied Secret the release mounts does not exist. */
  SecretMissing: 'SecretMissing',
  /** The release mounts other identity Secrets than the running workloads (warning). */
  IdentitySecretsSwitched: 'IdentitySecretsSwitched',
  /** The external webhook certificate does not verify against controller.webhook.caBundle. */
  WebhookCertificateInvalid: 'WebhookCertificateInvalid',
  /**
   * controller.webhook.caBundle does not hold the CA that issued the webhook certificate, while
   * the certificate Secret's own ca.crt does: the value is wrong, not the certificate.
   */
  WebhookCaBundleMismatch: 'WebhookCaBundleMismatch',

  // Secret material.

  /** A certificate, key or timestamp in the Secret cannot be decoded. */
  SecretUnparsable: 'SecretUnparsable',
  /** tls.key does not belong to the certificate in tls.crt. */
  KeyMismatch: 'KeyMismatch',
  /** The identity certificate lacks its role's extended key usage (serverAuth or clientAuth). */
  IdentityWrongPurpose: 'IdentityWrongPurpose',
  /** The identity certificate lacks the DNS SAN of the configured peer name. */
  IdentityNameMismatch: 'IdentityNameMismatch',
  /** The identity certificate does not chain to ca.crt (or to previous-ca.crt in an overlap). */
  IdentityUntrusted: 'IdentityUntrusted',
  /** The identity certificate (or a CA on its path) has expired. */
  IdentityExpired: 'IdentityExpired',
  /** The identity certificate (or a CA on its path) is not valid yet. */
  IdentityNotYetValid: 'IdentityNotYetValid',
  /** The issuer Secret's certificate is not a CA allowed to sign certificates. */
  IssuerNotCa: 'IssuerNotCa',
  /** A new or changed previous-ca-until is not in the future. */
  PreviousTrustDeadlinePassed: 'PreviousTrustDeadlinePassed',
  /** A new or changed previous-ca-until is more than 24 hours ahead. */
  PreviousTrustDeadlineTooFar: 'PreviousTrustDeadlineTooFar',
  /** A retained previous-ca.crt no longer grants trust: its deadline passed (warning). */
  PreviousTrustExpired: 'PreviousTrustExpired',
  /** A new CA rotation starts while previous-ca.crt of the last one is still present. */
  RotationInProgress: 'RotationInProgress',
  /** ca.crt (or the issuer CA) is replaced by a CA outside the stored lineage. */
  UnrelatedCaReplacement: 'UnrelatedCaReplacement',
  /** An identity or issuer Secret is being deleted (warning). */
  SecretDeleted: 'SecretDeleted',
  /** The values Secret is for another chart version; the pre-rollout Job validates it (warning). */
  ValuesForOtherChart: 'ValuesForOtherChart',

  // Routing objects (admission in `haptic run`).

  /** An Ingress has a value the controller would leave out (host, path, backend, TLS, annotation). */
  IngressInvalid: 'IngressInvalid',
  /** A HAProxyTemplateConfig cannot be read or its templates do not parse or render. */
  TemplateConfigInvalid: 'TemplateConfigInvalid',
  /** The configuration rendered with the proposed object has a forbidden directive. */
  RenderedConfigForbidden: 'RenderedConfigForbidden',
  /** haproxy -c rejects the configuration rendered with the proposed object. */
  RenderedConfigRejected: 'RenderedConfigRejected',
  /** The proposed object could not be checked (no configuration yet, check unavailable). */
  RenderUnchecked: 'RenderUnchecked',
} as const;

export type ValidationCode = (typeof validationCodes)[keyof typeof validationCodes];
