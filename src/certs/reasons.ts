/**
 * Reason codes of the default certificate provider's renewal decisions. Each names the state
 * found, not the action; the action follows from the chain that reported it (see
 * `renewal-policy.ts`). Logged by the renewal Job and usable as Event reasons.
 */
import type { Problem } from '../problem.ts';

export const renewalReasons = {
  // Refusals: the Job changes nothing and fails until an operator repairs the state.

  /** The configured validity is not a whole number of days of at least 1. */
  ValidityInvalid: 'ValidityInvalid',
  /** The issuer Secret exists but its CA certificate, key, generation or rotation state cannot be decoded. */
  IssuerUnparsable: 'IssuerUnparsable',
  /** The issuer Secret's private key does not belong to its CA certificate. */
  IssuerKeyMismatch: 'IssuerKeyMismatch',
  /** The issuer Secret's certificate is not a CA allowed to sign certificates. */
  IssuerNotCa: 'IssuerNotCa',
  /** The issuer Secret's CA is not valid yet: a clock is wrong or a future backup was restored. */
  IssuerNotYetValid: 'IssuerNotYetValid',
  /** The issuer Secret's rotation state does not certify its current CA under the previous one. */
  IssuerRotationInvalid: 'IssuerRotationInvalid',
  /** The issuer Secret is missing while identity Secrets exist: its backup must be restored. */
  IssuerMissing: 'IssuerMissing',
  /** One of the named Secrets belongs to another provider (cert-manager, or no default-provider label). */
  SecretOwnedByOtherProvider: 'SecretOwnedByOtherProvider',
  /** An identity Secret of the default provider is not of type kubernetes.io/tls. */
  IdentitySecretTypeInvalid: 'IdentitySecretTypeInvalid',

  // Bootstrap.

  /** Neither the issuer nor any identity Secret exists: this is the first issuance. */
  NothingIssued: 'NothingIssued',

  // CA rotation: a new CA and key, then both identities with new keys.

  /** The stored CA has expired. */
  CaExpired: 'CaExpired',
  /** The stored CA has reached its renewal time (30 days, or a third of a lifetime under 90 days). */
  CaRenewalDue: 'CaRenewalDue',
  /** An identity expires after the stored CA, so the CA would end its validity early. */
  CaOutlivedByIdentity: 'CaOutlivedByIdentity',

  // Identity re-issue under the stored CA and generation.

  /** The identity Secret does not exist. */
  IdentityMissing: 'IdentityMissing',
  /** The identity Secret exists but its certificate, key or trust data cannot be decoded. */
  IdentityUnparsable: 'IdentityUnparsable',
  /** The identity's private key does not belong to its certificate. */
  IdentityKeyMismatch: 'IdentityKeyMismatch',
  /** The identity certificate has expired. */
  IdentityExpired: 'IdentityExpired',
  /** The identity certificate is not valid yet. */
  IdentityNotYetValid: 'IdentityNotYetValid',
  /** The identity certificate does not chain to the stored CA. */
  IdentityIssuerMismatch: 'IdentityIssuerMismatch',
  /** The identity certificate lacks its role's extended key usage (serverAuth or clientAuth). */
  IdentityUsageMismatch: 'IdentityUsageMismatch',
  /** The identity certificate's DNS SAN is not the configured peer name. */
  IdentityNameMismatch: 'IdentityNameMismatch',
  /** The identity Secret's ca.crt is not exactly the stored CA. */
  IdentityTrustMismatch: 'IdentityTrustMismatch',
  /** During a rotation overlap, the identity lacks the previous CA trust or the cross-signed CA. */
  IdentityOverlapMismatch: 'IdentityOverlapMismatch',
  /** The identity certificate has reached its renewal time. */
  IdentityRenewalDue: 'IdentityRenewalDue',

  // Clean-up after a rotation.

  /** The issuer's rotation overlap deadline has passed; the previous CA must be forgotten. */
  PreviousCaExpired: 'PreviousCaExpired',
  /**
   * Before the overlap deadline, every current replica of both Deployments reports the new CA
   * and the identities issued with it: the previous CA is no longer needed by anyone.
   */
  ReplicasConverged: 'ReplicasConverged',
  /** An identity Secret still carries previous-CA trust or the cross-signed CA outside an overlap. */
  IdentityPreviousTrustStale: 'IdentityPreviousTrustStale',

  // Nothing to do.

  /** Every certificate is valid, consistent and before its renewal time. */
  UpToDate: 'UpToDate',
} as const;

export type RenewalReason = (typeof renewalReasons)[keyof typeof renewalReasons];

/** A reason with the sentence that explains it: what was found and what happens or must happen. */
export type Violation = Problem<RenewalReason>;
