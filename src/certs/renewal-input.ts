/**
 * What the renewal policy decides over: the issuer and both identities as found in their
 * Secrets (decoded by `secret-material.ts`), the configured names and validity. Decoded, not
 * judged: whether a key matches or a chain verifies is the policy's business.
 */
import type { CryptoKey, x509 } from '../pki/index.ts';

/** The two identities: `server` is the agent (serverAuth), `client` the controller (clientAuth). */
export type IdentityRole = 'server' | 'client';

/** Both roles, in the order decisions list them. */
export const identityRoles = ['server', 'client'] as const satisfies readonly IdentityRole[];

/** State of a CA rotation, kept in the issuer Secret until its overlap is cleaned up. */
export interface CaRotation {
  /** The CA the current one replaced. */
  readonly previousCa: x509.X509Certificate;
  /** The current CA's subject and key, signed by the previous CA for the overlap. */
  readonly crossSignedCa: x509.X509Certificate;
  /** End of the overlap: previous trust and the cross-signature stop counting then. */
  readonly until: Date;
}

export interface IssuerMaterial {
  readonly certificate: x509.X509Certificate;
  readonly privateKey: CryptoKey;
  /** Generation of the current CA: 1 for the first, one more for every rotation. */
  readonly generation: number;
  /** Present from a CA rotation until its clean-up. */
  readonly rotation?: CaRotation;
}

/** Previous-CA trust an identity Secret carries during a rotation overlap. */
export interface PreviousTrust {
  readonly certificates: readonly x509.X509Certificate[];
  readonly until: Date;
}

export interface IdentityMaterial {
  /** tls.crt: the leaf, then any intermediates (the cross-signed CA during an overlap). */
  readonly chain: readonly [x509.X509Certificate, ...x509.X509Certificate[]];
  /** tls.key. */
  readonly privateKey: CryptoKey;
  /** ca.crt: the CAs this peer trusts. */
  readonly trust: readonly x509.X509Certificate[];
  /** previous-ca.crt with previous-ca-until, when both are present. */
  readonly previousTrust?: PreviousTrust;
}

/** A Secret as found: not there, there but undecodable (with the reason), or decoded. */
export type Found<T> =
  | { readonly state: 'absent' }
  | { readonly state: 'unparsable'; readonly problem: string }
  | { readonly state: 'present'; readonly material: T };

export type IssuerState = Found<IssuerMaterial>;
export type IdentityState = Found<IdentityMaterial>;

export interface RenewalInput {
  readonly issuer: IssuerState;
  readonly identities: Readonly<Record<IdentityRole, IdentityState>>;
  /** DNS name each identity certifies: the agent server name and the controller client name. */
  readonly names: Readonly<Record<IdentityRole, string>>;
  /** How each Secret is named in messages, for example `haptic/haptic-agent-identity`. */
  readonly secretNames: Readonly<Record<IdentityRole | 'issuer', string>>;
  /** Validity of anything issued next, in days (`haproxy.agent.tls.certValidityDays`). @default 365 */
  readonly validityDays?: number;
}
