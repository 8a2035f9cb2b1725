/**
 * Secret material as decoded (see `identity-secret.ts`, `issuer-secret.ts`,
 * `key-pair-secret.ts`): the issuer, the identities and plain key pairs. Decoded, not judged:
 * whether a key matches or a chain verifies is for the renewal policy and the validator.
 */
import type { Certificate, CryptoKey } from '../pki/index.ts';
import type { SecretProblem } from './reasons.ts';

/** The two identities: `server` is the agent (serverAuth), `client` the controller (clientAuth). */
export type IdentityRole = 'server' | 'client';

/** Both roles, in the order decisions list them. */
export const identityRoles = ['server', 'client'] as const satisfies readonly IdentityRole[];

/** State of a CA rotation, kept in the issuer Secret until its overlap is cleaned up. */
export interface CaRotation {
  /** The CA the current one replaced. */
  readonly previousCa: Certificate;
  /** The current CA's subject and key, signed by the previous CA for the overlap. */
  readonly crossSignedCa: Certificate;
  /** End of the overlap: previous trust and the cross-signature stop counting then. */
  readonly until: Date;
}

export interface IssuerMaterial {
  readonly certificate: Certificate;
  readonly privateKey: CryptoKey;
  /** See {@link KeyPairMaterial.publicKeyInfo}. */
  readonly publicKeyInfo?: Uint8Array;
  /** Generation of the current CA: 1 for the first, one more for every rotation. */
  readonly generation: number;
  /** Present from a CA rotation until its clean-up. */
  readonly rotation?: CaRotation;
}

/** Previous-CA trust an identity Secret carries during a rotation overlap. */
export interface PreviousTrust {
  readonly certificates: readonly Certificate[];
  readonly until: Date;
}

/** tls.crt and tls.key: a webhook or frontend certificate, or cert-manager's CA. */
export interface KeyPairMaterial {
  /** tls.crt: the leaf, then any intermediates. */
  readonly chain: readonly [Certificate, ...Certificate[]];
  /** tls.key. Decoded from a Secret, it is made when first read. */
  readonly privateKey: CryptoKey;
  /**
   * The DER SubjectPublicKeyInfo of tls.key's public half, when the key was read from a Secret
   * (absent for keys made here): key matches compare it, so the validator never makes the key
   * itself (native objects the garbage collector frees in its pauses).
   */
  readonly publicKeyInfo?: Uint8Array;
}

export interface IdentityMaterial extends KeyPairMaterial {
  /** ca.crt: the CAs this peer trusts. */
  readonly trust: readonly Certificate[];
  /** previous-ca.crt with previous-ca-until, when both are present. */
  readonly previousTrust?: PreviousTrust;
}

/**
 * An identity's trust fields alone (ca.crt, previous-ca.crt with previous-ca-until): what
 * the history checks read of a Secret before its update, decoded without tls.crt and tls.key.
 */
export type IdentityTrust = Pick<IdentityMaterial, 'trust' | 'previousTrust'>;

/** Data that exists, decoded: usable material, or the problem that makes it unusable. */
export type Decoded<T> =
  | { readonly state: 'unparsable'; readonly problem: SecretProblem }
  | { readonly state: 'present'; readonly material: T };

/** A Secret as found: not there, or there and decoded. */
export type Found<T> = { readonly state: 'absent' } | Decoded<T>;

export type IssuerState = Found<IssuerMaterial>;
export type IdentityState = Found<IdentityMaterial>;
export type IdentityTrustState = Found<IdentityTrust>;
