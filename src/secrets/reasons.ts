/**
 * Why Secret data cannot be decoded. Every problem names the Secret key it is about, so a
 * finding's path comes from the key, never from the sentence.
 */
import type { Problem } from '../problem.ts';

export const secretReasons = {
  /** A required key is absent or empty. */
  KeyMissing: 'KeyMissing',
  /** One of keys that go together (previous-ca.crt and previous-ca-until, ...) without the others. */
  KeysIncomplete: 'KeysIncomplete',
  /** The value is neither base64 text nor bytes. */
  NotBase64: 'NotBase64',
  /** The value is larger than the caller accepts (at most the size limit of a Secret). */
  TooLarge: 'TooLarge',
  /** Not PEM certificates, a block that is no certificate, undecodable DER, or the wrong count. */
  CertificateInvalid: 'CertificateInvalid',
  /** Not an unencrypted PEM private key, or one of an algorithm that cannot be used. */
  PrivateKeyInvalid: 'PrivateKeyInvalid',
  /** Not an RFC 3339 UTC timestamp, or not a positive whole number where one is kept. */
  ValueInvalid: 'ValueInvalid',
} as const;

export type SecretReason = (typeof secretReasons)[keyof typeof secretReasons];

/** A decoding problem: the key it is about, its reason, and the sentence. */
export interface SecretProblem extends Problem<SecretReason> {
  readonly key: string;
}
