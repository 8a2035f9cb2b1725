/**
 * What the renewal policy decides over: the issuer and both identities as found in their
 * Secrets (decoded by `src/secrets`), the configured names and validity. Decoded, not judged:
 * whether a key matches or a chain verifies is the policy's business.
 */
import type { IdentityRole, IdentityState, IssuerState } from '../secrets/material.ts';

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
