/**
 * Identity material of one agent or controller identity Secret: decodable, key matching the
 * certificate, the role's extended key usage and DNS SAN, a chain to ca.crt (or to
 * previous-ca.crt while its deadline is ahead), valid now. The first problem is reported.
 */
import type { IdentityRole, IdentityState } from '../secrets/material.ts';
import { type ChainFailureReason, chainFailureReasons, verifyChain } from '../pki/index.ts';
import { keyBelongsTo } from './certificate-memo.ts';
import { type ValidationCode, validationCodes } from './codes.ts';
import { type Check, type Finding, error, firstFinding, secretPath } from './finding.ts';

export interface IdentitySubject {
  /** The Secret's name (for paths) and `namespace/name` (for messages). */
  readonly name: string;
  readonly label: string;
  readonly role: IdentityRole;
  /** The DNS SAN the role requires: the agent server name or the controller client name. */
  readonly peerName: string;
  readonly state: IdentityState;
  readonly now: Date;
}

/** What each role is called in messages. */
export const roleNames = { server: 'agent', client: 'controller' } as const;

const purposes = { server: 'serverAuth', client: 'clientAuth' } as const;

export const identityUnparsable: Check<IdentitySubject> = ({ name, role, state }) =>
  state.state === 'unparsable'
    ? error(
        validationCodes.SecretUnparsable,
        secretPath(name, state.problem.key),
        `${state.problem.message} The ${roleNames[role]} identity needs tls.crt (leaf, then intermediates), tls.key and ca.crt, all PEM.`,
      )
    : undefined;

export const identityKeyMismatch: Check<IdentitySubject> = ({ name, label, role, state }) =>
  state.state === 'present' && !keyBelongsTo(state.material, state.material.chain[0])
    ? error(
        validationCodes.KeyMismatch,
        secretPath(name, 'tls.key'),
        `tls.key of Secret ${label} does not belong to the ${roleNames[role]} certificate in tls.crt: update tls.crt and tls.key together, from the same issuance.`,
      )
    : undefined;

const chainCodes: Record<ChainFailureReason, ValidationCode> = {
  [chainFailureReasons.Empty]: validationCodes.IdentityUntrusted,
  [chainFailureReasons.Expired]: validationCodes.IdentityExpired,
  [chainFailureReasons.NotYetValid]: validationCodes.IdentityNotYetValid,
  [chainFailureReasons.WrongPurpose]: validationCodes.IdentityWrongPurpose,
  [chainFailureReasons.NameMismatch]: validationCodes.IdentityNameMismatch,
  [chainFailureReasons.UnknownAuthority]: validationCodes.IdentityUntrusted,
  [chainFailureReasons.NotCa]: validationCodes.IdentityUntrusted,
  [chainFailureReasons.PathTooLong]: validationCodes.IdentityUntrusted,
};

export const identityChainInvalid: Check<IdentitySubject> = (subject) => {
  const { name, label, role, state, now, peerName } = subject;
  if (state.state !== 'present') return undefined;
  const { chain, trust, previousTrust } = state.material;
  const overlap = previousTrust !== undefined && previousTrust.until.getTime() > now.getTime();
  const result = verifyChain({
    chain,
    anchors: overlap ? [...trust, ...previousTrust.certificates] : trust,
    now,
    purpose: purposes[role],
    dnsName: peerName,
  });
  if (result.ok) return undefined;
  const against = overlap ? 'ca.crt or previous-ca.crt' : 'ca.crt';
  return error(
    chainCodes[result.reason],
    secretPath(name, 'tls.crt'),
    `The ${roleNames[role]} certificate in Secret ${label} does not verify against ${against}: ${result.message}`,
  );
};

/** The identity checks, in order; the first finding wins. */
export function identityChecks(): readonly Check<IdentitySubject>[] {
  return [identityUnparsable, identityKeyMismatch, identityChainInvalid];
}

export function checkIdentity(subject: IdentitySubject): Finding | undefined {
  return firstFinding(subject, identityChecks());
}
