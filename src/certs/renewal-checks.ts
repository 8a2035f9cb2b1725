/**
 * The renewal policy's checks, in cert-manager's policy-chain style: each check looks at one
 * context and returns a violation (reason + sentence) or nothing; a chain stops at the first
 * violation; the builders at the end say which checks run, in which order.
 */
import { isSignedBy } from '../pki/certificate-facts.ts';
import {
  type ChainFailureReason,
  certificateFingerprint,
  chainFailureReasons,
  keyMatchesCertificate,
  verifyChain,
  x509,
} from '../pki/index.ts';
import { type RenewalReason, type Violation, renewalReasons } from './reasons.ts';
import type {
  CaRotation,
  IdentityMaterial,
  IdentityRole,
  IdentityState,
  IssuerMaterial,
  RenewalInput,
} from './renewal-input.ts';
import { identityRoles } from './renewal-input.ts';
import { isRenewalDue, renewalTime } from './renewal-time.ts';

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

const roleLabels = { server: 'agent (server)', client: 'controller (client)' } as const;
const purposes = { server: 'serverAuth', client: 'clientAuth' } as const;

/** A sentence as a clause: without its final period. */
function clause(sentence: string): string {
  return sentence.replace(/\.$/, '');
}

function violation(reason: RenewalReason, message: string): Violation {
  return { reason, message };
}

function sameCertificates(
  a: readonly x509.X509Certificate[],
  b: readonly x509.X509Certificate[],
): boolean {
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

const restoreBackup =
  'Restore the issuer Secret from its backup; the Job will not replace existing identities with an unrelated CA.';

// Refusals.

export const validityInvalid: Check<PolicyContext> = ({ validityDays }) =>
  Number.isInteger(validityDays) && validityDays >= 1
    ? undefined
    : violation(
        renewalReasons.ValidityInvalid,
        `haproxy.agent.tls.certValidityDays must be a whole number of days of at least 1, not ${validityDays}; fix the value and rerun the Job.`,
      );

export const issuerUnparsable: Check<PolicyContext> = ({ input }) =>
  input.issuer.state === 'unparsable'
    ? violation(
        renewalReasons.IssuerUnparsable,
        `The issuer Secret ${input.secretNames.issuer} is corrupt: ${input.issuer.problem} ${restoreBackup}`,
      )
    : undefined;

export const issuerMissingWhileIdentitiesExist: Check<PolicyContext> = ({ input }) => {
  if (input.issuer.state !== 'absent') return undefined;
  const existing = identityRoles.filter((role) => input.identities[role].state !== 'absent');
  if (existing.length === 0) return undefined;
  const names = existing.map((role) => input.secretNames[role]).join(' and ');
  return violation(
    renewalReasons.IssuerMissing,
    `The issuer Secret ${input.secretNames.issuer} is missing while the identity Secret ${names} exists. ${restoreBackup}`,
  );
};

/** The checks below only speak about a decoded issuer. */
function onIssuer(
  check: (issuer: IssuerMaterial, context: PolicyContext) => Violation | undefined,
): Check<PolicyContext> {
  return (context) =>
    context.input.issuer.state === 'present'
      ? check(context.input.issuer.material, context)
      : undefined;
}

export const issuerKeyMismatch = onIssuer((issuer, { input }) =>
  keyMatchesCertificate(issuer.privateKey, issuer.certificate)
    ? undefined
    : violation(
        renewalReasons.IssuerKeyMismatch,
        `The private key in the issuer Secret ${input.secretNames.issuer} does not belong to its CA certificate. ${restoreBackup}`,
      ),
);

export const issuerNotCa = onIssuer((issuer, { input }) => {
  const basic = issuer.certificate.getExtension(x509.BasicConstraintsExtension);
  return basic?.ca === true
    ? undefined
    : violation(
        renewalReasons.IssuerNotCa,
        `The certificate in the issuer Secret ${input.secretNames.issuer} is not a CA (basicConstraints CA:TRUE). ${restoreBackup}`,
      );
});

export const issuerNotYetValid = onIssuer((issuer, { input, now }) =>
  now.getTime() >= issuer.certificate.notBefore.getTime()
    ? undefined
    : violation(
        renewalReasons.IssuerNotYetValid,
        `The CA in the issuer Secret ${input.secretNames.issuer} is not valid before ${issuer.certificate.notBefore.toISOString()}; ` +
          `check the clock of the node running the Job, or restore the current backup of the issuer Secret.`,
      ),
);

export const issuerRotationInvalid = onIssuer((issuer, { input }) => {
  const rotation = issuer.rotation;
  if (rotation === undefined) return undefined;
  const cross = rotation.crossSignedCa;
  const consistent =
    cross.subject === issuer.certificate.subject &&
    keyMatchesCertificate(issuer.privateKey, cross) &&
    isSignedBy(cross, rotation.previousCa);
  return consistent
    ? undefined
    : violation(
        renewalReasons.IssuerRotationInvalid,
        `The rotation state in the issuer Secret ${input.secretNames.issuer} does not certify its CA under the previous CA. ${restoreBackup}`,
      );
});

// Bootstrap.

/** Why the Job bootstraps; asked only once the refusals found no identity without an issuer. */
export function nothingIssued(input: RenewalInput): Violation {
  return violation(
    renewalReasons.NothingIssued,
    `Neither the issuer Secret ${input.secretNames.issuer} nor an identity Secret exists; the Job creates the CA and both identities.`,
  );
}

// CA rotation.

export const caExpired: Check<IssuedContext> = ({ issuer, input, now }) =>
  now.getTime() > issuer.certificate.notAfter.getTime()
    ? violation(
        renewalReasons.CaExpired,
        `The CA (generation ${issuer.generation}) in the issuer Secret ${input.secretNames.issuer} expired at ${issuer.certificate.notAfter.toISOString()}; the Job rotates the CA and both identities.`,
      )
    : undefined;

export const caRenewalDue: Check<IssuedContext> = ({ issuer, input, now }) =>
  isRenewalDue(issuer.certificate, now)
    ? violation(
        renewalReasons.CaRenewalDue,
        `The CA (generation ${issuer.generation}) in the issuer Secret ${input.secretNames.issuer} expires at ${issuer.certificate.notAfter.toISOString()} and was due for renewal at ${renewalTime(issuer.certificate).toISOString()}; the Job rotates the CA and both identities.`,
      )
    : undefined;

export const caOutlivedByIdentity: Check<IssuedContext> = ({ issuer, input }) => {
  for (const role of identityRoles) {
    const identity = input.identities[role];
    if (identity.state !== 'present') continue;
    const [leaf] = identity.material.chain;
    if (
      leaf.notAfter.getTime() > issuer.certificate.notAfter.getTime() &&
      isSignedBy(leaf, issuer.certificate)
    ) {
      return violation(
        renewalReasons.CaOutlivedByIdentity,
        `The ${roleLabels[role]} identity in Secret ${input.secretNames[role]} is valid until ${leaf.notAfter.toISOString()}, after its CA expires at ${issuer.certificate.notAfter.toISOString()}; the Job rotates the CA and both identities.`,
      );
    }
  }
  return undefined;
};

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
        `${about(context)} is unreadable (${clause(context.identity.problem)}); ${reissue(context)}`,
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

export const previousCaExpired: Check<IssuedContext> = ({ issuer, input, now }) =>
  issuer.rotation !== undefined && now.getTime() >= issuer.rotation.until.getTime()
    ? violation(
        renewalReasons.PreviousCaExpired,
        `The trust overlap of the CA rotation to generation ${issuer.generation} ended at ${issuer.rotation.until.toISOString()}; the Job removes the previous CA from the issuer Secret ${input.secretNames.issuer} and the identity Secrets.`,
      )
    : undefined;

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

/** Checks that make the Job refuse to act: bad configuration or an issuer it must not replace. */
export function refusalChecks(): readonly Check<PolicyContext>[] {
  return [
    validityInvalid,
    issuerUnparsable,
    issuerMissingWhileIdentitiesExist,
    issuerKeyMismatch,
    issuerNotCa,
    issuerNotYetValid,
    issuerRotationInvalid,
  ];
}

/** Checks that rotate the CA. Not run while a rotation's overlap is open. */
export function caRotationChecks(): readonly Check<IssuedContext>[] {
  return [caExpired, caRenewalDue, caOutlivedByIdentity];
}

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

/** Checks on the issuer that end a rotation. */
export function issuerCleanupChecks(): readonly Check<IssuedContext>[] {
  return [previousCaExpired];
}

/** Checks on one identity that end a rotation. */
export function identityCleanupChecks(): readonly Check<IdentityContext>[] {
  return [identityPreviousTrustStale];
}
