/**
 * What the renewal policy decides over: the issuer and both identities as found in their
 * Secrets (decoded by `src/secrets`), the configured names and validity. Decoded, not judged:
 * whether a key matches or a chain verifies is the policy's business.
 */
import type { IdentityRole, IdentityState, IssuerState } from '../secrets/material.ts';
import type { ReplicaConvergence } from './replica-convergence.ts';

export interface RenewalInput {
  readonly issuer: IssuerState;
  readonly identities: Readonly<Record<IdentityRole, IdentityState>>;
  /** DNS name each identity certifies: the agent server name and the controller client name. */
  readonly names: Readonly<Record<IdentityRole, string>>;
  /** How each Secret is named in messages, for example `haptic/haptic-agent-identity`. */
  readonly secretNames: Readonly<Record<IdentityRole | 'issuer', string>>;
  /** Validity of anything issued next, in days (`haproxy.agent.tls.certValidityDays`). @default 365 */
  readonly validityDays?: number;
  /**
   * What the current replicas report having loaded, judged against these identity Secrets;
   * absent when not read. During a rotation's overlap, the previous CA is removed before the
   * deadline only when this says every replica reports the new identities.
   */
  readonly convergence?: ReplicaConvergence;
}
