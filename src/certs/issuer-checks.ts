/**
 * Checks on the issuer: refusals (configuration and an issuer the Job must not replace), the
 * bootstrap finding, CA rotation and the end of a rotation's overlap. Builders at the end.
 */
import { isSignedBy, keyMatchesCertificate } from '../pki/index.ts';
import {
  type Check,
  type IssuedContext,
  type PolicyContext,
  restoreBackup,
  roleLabels,
  violation,
} from './policy-chain.ts';
import { type Violation, renewalReasons } from './reasons.ts';
import { type IssuerMaterial, identityRoles } from '../secrets/material.ts';
import { type RenewalInput } from './renewal-input.ts';
import { isRenewalDue, renewalTime } from './renewal-time.ts';
import { everyReplicaConverged } from './replica-convergence.ts';

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
        `The issuer Secret ${input.secretNames.issuer} is corrupt: ${input.issuer.problem.message} ${restoreBackup}`,
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

export const issuerNotCa = onIssuer((issuer, { input }) =>
  issuer.certificate.ca
    ? undefined
    : violation(
        renewalReasons.IssuerNotCa,
        `The certificate in the issuer Secret ${input.secretNames.issuer} is not a CA (basicConstraints CA:TRUE). ${restoreBackup}`,
      ),
);

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

// Clean-up.

export const previousCaExpired: Check<IssuedContext> = ({ issuer, input, now }) =>
  issuer.rotation !== undefined && now.getTime() >= issuer.rotation.until.getTime()
    ? violation(
        renewalReasons.PreviousCaExpired,
        `The trust overlap of the CA rotation to generation ${issuer.generation} ended at ${issuer.rotation.until.toISOString()}; the Job removes the previous CA from the issuer Secret ${input.secretNames.issuer} and the identity Secrets.`,
      )
    : undefined;

export const replicasConverged: Check<IssuedContext> = ({ issuer, overlap, input }) => {
  const convergence = input.convergence;
  if (overlap === undefined || convergence === undefined || !everyReplicaConverged(convergence))
    return undefined;
  return violation(
    renewalReasons.ReplicasConverged,
    `Every current replica (${convergence.replicas.length}) reports the CA generation ${issuer.generation} and the identities issued with it, ` +
      `before the trust overlap ends at ${overlap.until.toISOString()}; the Job removes the previous CA from the issuer Secret ${input.secretNames.issuer} and the identity Secrets now.`,
  );
};

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

/**
 * Checks on the issuer that end a rotation: its deadline has passed, or every replica already
 * reports the new identities. Run after the identities were found consistent with the rotation.
 */
export function issuerCleanupChecks(): readonly Check<IssuedContext>[] {
  return [previousCaExpired, replicasConverged];
}
