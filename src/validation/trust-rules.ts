/**
 * Trust transitions of an identity Secret: the previous-CA deadline, one rotation at a time, and
 * no CA in the trust set that the Secret's history does not explain. `old` is the Secret before
 * the write (absent on create and for live checks). The previous-CA deadline rules are in
 * deadline-rules.ts; what a trust set holds and how CAs relate is in trust-set.ts.
 *
 * The trust set is what peers accept: ca.crt, and previous-ca.crt while previous-ca-until is
 * ahead. A write may leave in it only CAs of the current trust set (or renewals of them, same
 * subject and key); a new CA enters only in the guide's first rotation stage — ca.crt the new
 * CA, previous-ca.crt the current ca.crt, previous-ca-until ahead — so every CA change is a
 * visible, time-boxed overlap, whatever writes came before. As found in the cluster (no
 * history), every CA of ca.crt must anchor the release's agent or controller certificate,
 * except while a rotation that started keeps the anchor in previous-ca.crt.
 */
import type { IdentityMaterial, IdentityTrust } from '../secrets/material.ts';
import type { Certificate } from '../pki/index.ts';
import { validationCodes } from './codes.ts';
import { checkDeadline } from './deadline-rules.ts';
import { type Check, type Finding, error, everyFinding, secretPath } from './finding.ts';
import {
  acceptedCas,
  anchorsChain,
  isKnownCa,
  previousInForce,
  sameCertificates,
  subjectsOf,
} from './trust-set.ts';

export interface TrustSubject {
  readonly name: string;
  readonly label: string;
  /** Trust fields before the write; undefined on create, for live checks, or if unreadable. */
  readonly old: IdentityTrust | undefined;
  readonly next: IdentityMaterial;
  /** Live checks: the release's other identity as found, whose issuer this Secret must trust. */
  readonly peer?: IdentityMaterial;
  /** `write`: the Secret is being written now; `live`: as found in the cluster. */
  readonly mode: 'write' | 'live';
  readonly now: Date;
}

const rotationSteps =
  'set ca.crt to the new CA, previous-ca.crt to the current ca.crt and previous-ca-until at most 24 hours ahead in one write, then replace tls.crt and tls.key, then remove previous-ca.crt and previous-ca-until';

export const rotationInProgress: Check<TrustSubject> = ({ name, label, old, next }) => {
  const before = old?.previousTrust;
  const after = next.previousTrust;
  if (old === undefined || before === undefined || after === undefined) return undefined;
  const restarted =
    !sameCertificates(old.trust, next.trust) ||
    !sameCertificates(before.certificates, after.certificates);
  return restarted
    ? error(
        validationCodes.RotationInProgress,
        secretPath(name, 'ca.crt'),
        `Secret ${label} is still in a CA rotation (previous-ca.crt is present): complete it by removing previous-ca.crt and previous-ca-until before starting another one.`,
      )
    : undefined;
};

/**
 * The guide's first rotation stage: previous-ca.crt keeps (some of) the ca.crt before the write.
 * Then the CAs of ca.crt are introduced by the rotation. Its deadline is the deadline rules'
 * business: one set now must lie ahead (at most 24 hours), and a stored one cannot start another
 * rotation (rotationInProgress).
 */
function startsRotation(old: IdentityTrust, next: IdentityMaterial): boolean {
  const previous = next.previousTrust?.certificates ?? [];
  return previous.length > 0 && previous.every((ca) => isKnownCa(ca, old.trust));
}

export const unrelatedCaWritten: Check<TrustSubject> = ({ name, label, old, next, mode, now }) => {
  if (mode !== 'write' || old === undefined) return undefined;
  const current = acceptedCas(old, now);
  const foreign = (ca: Certificate): boolean => !isKnownCa(ca, current);
  const added = startsRotation(old, next) ? [] : next.trust.filter(foreign);
  if (added.length > 0) {
    return error(
      validationCodes.UnrelatedCaReplacement,
      secretPath(name, 'ca.crt'),
      `ca.crt of Secret ${label} adds the CA ${subjectsOf(added)}, which is neither a CA the Secret trusts now (${subjectsOf(current)}) nor a renewal of one (same subject and key), and previous-ca.crt does not keep the current ca.crt: ` +
        `a new CA enters only by a rotation: ${rotationSteps}.`,
    );
  }
  const smuggled = previousInForce(next, now).filter(foreign);
  return smuggled.length === 0
    ? undefined
    : error(
        validationCodes.UnrelatedCaReplacement,
        secretPath(name, 'previous-ca.crt'),
        `previous-ca.crt of Secret ${label} adds the CA ${subjectsOf(smuggled)}, which the Secret does not trust now (${subjectsOf(current)}): previous-ca.crt only keeps the CA that ca.crt held when the rotation started; set it to the current ca.crt, or remove previous-ca.crt and previous-ca-until.`,
      );
};

export const strayCaTrusted: Check<TrustSubject> = ({ name, label, next, peer, mode }) => {
  if (mode !== 'live') return undefined;
  // A rotation that started keeps the anchor in previous-ca.crt; once its deadline passed, the
  // identity rules say what to do (replace the identities), so it still counts as started here.
  const started = (next.previousTrust?.certificates ?? []).some((ca) =>
    anchorsChain(ca, next.chain),
  );
  if (started) return undefined;
  // A chain no CA of ca.crt anchors (an intermediate missing or from elsewhere) is the identity
  // rules' finding (IdentityUntrusted); calling ca.crt stray as well would point at the wrong fix.
  if (!next.trust.some((ca) => anchorsChain(ca, next.chain))) return undefined;
  const chains = peer === undefined ? [next.chain] : [next.chain, peer.chain];
  const stray = next.trust.filter((ca) => !chains.some((chain) => anchorsChain(ca, chain)));
  return stray.length === 0
    ? undefined
    : error(
        validationCodes.UnrelatedCaReplacement,
        secretPath(name, 'ca.crt'),
        `ca.crt of Secret ${label} trusts the CA ${subjectsOf(stray)}, which issued neither the agent nor the controller certificate of this release: remove it from ca.crt; to move to that CA, ${rotationSteps}.`,
      );
};

/** Trust checks; all of them run, then the deadline checks. */
export function trustChecks(): readonly Check<TrustSubject>[] {
  return [rotationInProgress, unrelatedCaWritten, strayCaTrusted];
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
