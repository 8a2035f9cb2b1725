/**
 * Checks on one identity: what makes the Job re-issue it under the stored CA, and what makes
 * it clean up a finished rotation's leftovers. Builders at the end.
 */
import {
  type ChainFailureReason,
  chainFailureReasons,
  keyMatchesCertificate,
  verifyChain,
} from '../pki/index.ts';
import {
  type Check,
  type IdentityContext,
  clause,
  purposes,
  roleLabels,
  sameCertificates,
  violation,
} from './policy-chain.ts';
import { type Violation, renewalReasons } from './reasons.ts';
import type { IdentityMaterial } from '../secrets/material.ts';
import { isRenewalDue, renewalTime } from './renewal-time.ts';

// Identities.

function about({ role, input }: IdentityContext): string {
  return `The ${roleLabels[role]} identity in Secret ${input.secretNames[role]}`;
}

function reissue({ issuer }: IdentityContext): string {
  return `the Job re-issues it under the stored CA (generation ${issuer.generation}).`;
}

export const identitySecretMissing: Check<IdentityContext> = (context) =>
  context.identity.state === 'absent'
    ? violation(
        renewalReasons.IdentityMissing,
        `The ${roleLabels[context.role]} identity Secret ${context.input.secretNames[context.role]} is missing; ${reissue(context)}`,
      )
    : undefined;

export const identityUnparsable: Check<IdentityContext> = (context) =>
  context.identity.state === 'unparsable'
    ? violation(
        renewalReasons.IdentityUnparsable,
        `${about(context)} is unreadable (${clause(context.identity.problem.message)}); ${reissue(context)}`,
      )
    : undefined;

/** The checks below only speak about a decoded identity. */
function onIdentity(
  check: (identity: IdentityMaterial, context: IdentityContext) => Violation | undefined,
): Check<IdentityContext> {
  return (context) =>
    context.identity.state === 'present' ? check(context.identity.material, context) : undefined;
}

export const identityKeyMismatch = onIdentity((identity, context) =>
  keyMatchesCertificate(identity.privateKey, identity.chain[0])
    ? undefined
    : violation(
        renewalReasons.IdentityKeyMismatch,
        `${about(context)} has a tls.key that does not belong to its tls.crt; ${reissue(context)}`,
      ),
);

/** The renewal reason and the finding, as a clause, for each way an identity fails to verify. */
function chainFinding(
  reason: ChainFailureReason,
  identity: IdentityMaterial,
  context: IdentityContext,
): Violation {
  const [leaf] = identity.chain;
  switch (reason) {
    case chainFailureReasons.Expired:
      return violation(renewalReasons.IdentityExpired, `expired at ${leaf.notAfter.toISOString()}`);
    case chainFailureReasons.NotYetValid:
      return violation(
        renewalReasons.IdentityNotYetValid,
        `is not valid before ${leaf.notBefore.toISOString()}`,
      );
    case chainFailureReasons.WrongPurpose:
      return violation(
        renewalReasons.IdentityUsageMismatch,
        `lacks the ${purposes[context.role]} extended key usage`,
      );
    case chainFailureReasons.NameMismatch:
      return violation(
        renewalReasons.IdentityNameMismatch,
        `does not carry the configured name ${context.input.names[context.role]} as a DNS SAN`,
      );
    default:
      return violation(
        renewalReasons.IdentityIssuerMismatch,
        `is not issued by the stored CA ${context.issuer.certificate.subject}`,
      );
  }
}

export const identityChainInvalid = onIdentity((identity, context) => {
  const result = verifyChain({
    chain: identity.chain,
    anchors: [context.issuer.certificate],
    now: context.now,
    purpose: purposes[context.role],
    dnsName: context.input.names[context.role],
  });
  if (result.ok) return undefined;
  const finding = chainFinding(result.reason, identity, context);
  return violation(finding.reason, `${about(context)} ${finding.message}; ${reissue(context)}`);
});

export const identityTrustMismatch = onIdentity((identity, context) =>
  sameCertificates(identity.trust, [context.issuer.certificate])
    ? undefined
    : violation(
        renewalReasons.IdentityTrustMismatch,
        `${about(context)} has a ca.crt other than the stored CA; ${reissue(context)}`,
      ),
);

export const identityOverlapMismatch = onIdentity((identity, context) => {
  const { overlap } = context;
  if (overlap === undefined) return undefined;
  const previous = identity.previousTrust;
  const consistent =
    previous !== undefined &&
    previous.until.getTime() === overlap.until.getTime() &&
    sameCertificates(previous.certificates, [overlap.previousCa]) &&
    sameCertificates(identity.chain.slice(1), [overlap.crossSignedCa]);
  return consistent
    ? undefined
    : violation(
        renewalReasons.IdentityOverlapMismatch,
        `${about(context)} lacks the previous CA trust until ${overlap.until.toISOString()} or the cross-signed CA of the running rotation; ${reissue(context)}`,
      );
});

export const identityRenewalDue = onIdentity((identity, context) => {
  const [leaf] = identity.chain;
  return isRenewalDue(leaf, context.now)
    ? violation(
        renewalReasons.IdentityRenewalDue,
        `${about(context)} expires at ${leaf.notAfter.toISOString()} and was due for renewal at ${renewalTime(leaf).toISOString()}; ${reissue(context)}`,
      )
    : undefined;
});

// Clean-up.

export const identityPreviousTrustStale = onIdentity((identity, context) =>
  context.overlap === undefined &&
  (identity.previousTrust !== undefined || identity.chain.length > 1)
    ? violation(
        renewalReasons.IdentityPreviousTrustStale,
        `${about(context)} still carries previous-CA trust or the cross-signed CA outside a rotation overlap; the Job removes them.`,
      )
    : undefined,
);

// Builders.

/** Checks that re-issue one identity under the stored CA. */
export function identityChecks(): readonly Check<IdentityContext>[] {
  return [
    identitySecretMissing,
    identityUnparsable,
    identityKeyMismatch,
    identityChainInvalid,
    identityTrustMismatch,
    identityOverlapMismatch,
    identityRenewalDue,
  ];
}

/** Checks on one identity that end a rotation. */
export function identityCleanupChecks(): readonly Check<IdentityContext>[] {
  return [identityPreviousTrustStale];
}
