/**
 * The shape of the renewal policy's checks, in cert-manager's policy-chain style: each check
 * looks at one context and returns a violation (reason + sentence) or nothing; a chain stops at
 * the first violation. The checks live in `issuer-checks.ts` and `identity-checks.ts`, whose
 * builders say which checks run, in which order.
 */
import { type Certificate, certificateFingerprint } from '../pki/index.ts';
import type { RenewalReason, Violation } from './reasons.ts';
import type {
  CaRotation,
  IdentityRole,
  IdentityState,
  IssuerMaterial,
} from '../secrets/material.ts';
import type { RenewalInput } from './renewal-input.ts';

export type Check<T> = (subject: T) => Violation | undefined;

/** Everything a refusal or bootstrap check sees. */
export interface PolicyContext {
  readonly input: RenewalInput;
  readonly now: Date;
  readonly validityDays: number;
}

/** What CA and clean-up checks see once the issuer decoded and passed the refusal checks. */
export interface IssuedContext extends PolicyContext {
  readonly issuer: IssuerMaterial;
  /** The issuer's rotation while its overlap is still open at `now`. */
  readonly overlap: CaRotation | undefined;
}

/** What an identity check sees. */
export interface IdentityContext extends IssuedContext {
  readonly role: IdentityRole;
  readonly identity: IdentityState;
}

/** Runs checks in order and returns the first violation. */
export function firstViolation<T>(subject: T, checks: readonly Check<T>[]): Violation | undefined {
  for (const check of checks) {
    const violation = check(subject);
    if (violation !== undefined) return violation;
  }
  return undefined;
}

/** How messages name each identity. */
export const roleLabels = { server: 'agent (server)', client: 'controller (client)' } as const;
/** Extended key usage each identity must carry. */
export const purposes = { server: 'serverAuth', client: 'clientAuth' } as const;

/** A sentence as a clause: without its final period. */
export function clause(sentence: string): string {
  return sentence.replace(/\.$/, '');
}

/** A violation of `reason` explained by `message`. */
export function violation(reason: RenewalReason, message: string): Violation {
  return { reason, message };
}

/** True when both lists hold the same certificates in the same order. */
export function sameCertificates(a: readonly Certificate[], b: readonly Certificate[]): boolean {
  return (
    a.length === b.length &&
    a.every((certificate, index) => {
      const other = b[index];
      return (
        other !== undefined && certificateFingerprint(certificate) === certificateFingerprint(other)
      );
    })
  );
}

/** What every refusal about the issuer asks the operator to do. */
export const restoreBackup =
  'Restore the issuer Secret from its backup; the Job will not replace existing identities with an unrelated CA.';
