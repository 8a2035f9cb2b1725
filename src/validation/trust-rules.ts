/**
 * Trust transitions of an identity Secret: the previous-CA deadline, one rotation at a time,
 * and no replacement of ca.crt by an unrelated CA. `old` is the Secret before the write (absent
 * on create and for live checks). The previous-CA deadline rules are in deadline-rules.ts.
 */
import type { IdentityMaterial } from '../certs/renewal-input.ts';
import { publicKeysEqual, type x509 } from '../pki/index.ts';
import { fingerprintOf } from './certificate-memo.ts';
import { validationCodes } from './codes.ts';
import { checkDeadline } from './deadline-rules.ts';
import { type Check, type Finding, error, everyFinding, secretPath } from './finding.ts';

export interface TrustSubject {
  readonly name: string;
  readonly label: string;
  /** Decoded content before the write; undefined on create, for live checks, or if unreadable. */
  readonly old: IdentityMaterial | undefined;
  readonly next: IdentityMaterial;
  /** `write`: the Secret is being written now; `live`: as found in the cluster. */
  readonly mode: 'write' | 'live';
  readonly now: Date;
}

function fingerprints(certificates: readonly x509.X509Certificate[]): Set<string> {
  return new Set(certificates.map(fingerprintOf));
}

function sameSet(a: readonly x509.X509Certificate[], b: readonly x509.X509Certificate[]): boolean {
  const left = fingerprints(a);
  const right = fingerprints(b);
  return left.size === right.size && [...left].every((print) => right.has(print));
}

function subjects(certificates: readonly x509.X509Certificate[]): string {
  return certificates.map((certificate) => certificate.subject).join(', ');
}

export const rotationInProgress: Check<TrustSubject> = ({ name, label, old, next }) => {
  const before = old?.previousTrust;
  const after = next.previousTrust;
  if (old === undefined || before === undefined || after === undefined) return undefined;
  const restarted =
    !sameSet(old.trust, next.trust) || !sameSet(before.certificates, after.certificates);
  return restarted
    ? error(
        validationCodes.RotationInProgress,
        secretPath(name, 'ca.crt'),
        `Secret ${label} is still in a CA rotation (previous-ca.crt is present): complete it by removing previous-ca.crt and previous-ca-until before starting another one.`,
      )
    : undefined;
};

/** A renewal keeps the CA's subject and key (cert-manager renews its root this way). */
function isRenewalOf(candidate: x509.X509Certificate, ca: x509.X509Certificate): boolean {
  return candidate.subject === ca.subject && publicKeysEqual(candidate, ca);
}

export const unrelatedCaReplacement: Check<TrustSubject> = ({ name, label, old, next }) => {
  if (old === undefined) return undefined;
  const kept = fingerprints(old.trust);
  const introduced = next.trust.filter(
    (ca) => !kept.has(fingerprintOf(ca)) && !old.trust.some((known) => isRenewalOf(ca, known)),
  );
  if (introduced.length === 0) return undefined;
  const stillTrusted = fingerprints([...next.trust, ...(next.previousTrust?.certificates ?? [])]);
  if ([...kept].every((print) => stillTrusted.has(print))) return undefined;
  return error(
    validationCodes.UnrelatedCaReplacement,
    secretPath(name, 'ca.crt'),
    `ca.crt of Secret ${label} replaces the CA ${subjects(old.trust)} with ${subjects(introduced)}, which is neither a renewal of it nor introduced with previous-ca.crt set to the current CA: ` +
      'first add the new CA to ca.crt with previous-ca.crt holding the current CA and previous-ca-until at most 24 hours ahead, then replace tls.crt and tls.key, then remove previous-ca.crt and previous-ca-until.',
  );
};

/** Trust checks; all of them run, then the deadline checks. */
export function trustChecks(): readonly Check<TrustSubject>[] {
  return [rotationInProgress, unrelatedCaReplacement];
}

export function checkTrust(subject: TrustSubject): Finding[] {
  const { name, label, old, next, mode, now } = subject;
  return [
    ...everyFinding(subject, trustChecks()),
    ...checkDeadline({
      name,
      label,
      until: next.previousTrust?.until,
      before: old?.previousTrust?.until,
      mode,
      now,
    }),
  ];
}
