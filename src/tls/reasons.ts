/**
 * Reason codes of the mounted TLS material (identity and trust) and of peer authentication.
 * Each names the state found; logged by both peers and returned in the agent's error answers.
 */
import { type ChainFailureReason, chainFailureReasons } from '../pki/index.ts';

export const materialReasons = {
  /** The directory cannot be read, or its revision kept changing while it was read. */
  MaterialUnreadable: 'MaterialUnreadable',
  /** tls.crt, tls.key or ca.crt is absent (Secret not projected yet, or a key missing). */
  MaterialMissing: 'MaterialMissing',
  /** A file is not what its name says: PEM certificates, an unencrypted PEM key, a timestamp. */
  MaterialUnparsable: 'MaterialUnparsable',
  /** tls.key does not belong to the first certificate of tls.crt. */
  KeyMismatch: 'KeyMismatch',
  /** previous-ca.crt without previous-ca-until, or previous-ca-until without previous-ca.crt. */
  PreviousTrustIncomplete: 'PreviousTrustIncomplete',
  /** previous-ca-until is more than 24 hours ahead: previous trust must end soon. */
  PreviousTrustDeadlineTooFar: 'PreviousTrustDeadlineTooFar',
  /** The own certificate (first of tls.crt) has expired. */
  IdentityExpired: 'IdentityExpired',
  /** The own certificate is not valid yet. */
  IdentityNotYetValid: 'IdentityNotYetValid',
} as const;

export type MaterialReason = (typeof materialReasons)[keyof typeof materialReasons];

export const peerReasons = {
  ...chainFailureReasons,
  /** The peer completed the TLS handshake without a certificate. */
  NoPeerCertificate: 'NoPeerCertificate',
  /** OpenSSL rejected the peer's chain during the handshake. */
  HandshakeUnauthorized: 'HandshakeUnauthorized',
} as const;

export type PeerReason = ChainFailureReason | (typeof peerReasons)[keyof typeof peerReasons];
