/**
 * Writes to the release's issuer Secret (the default provider's CA, or the root CA that
 * cert-manager keeps for the chart-created issuer): decodable, key matching, a CA, the CA
 * replaced only within its lineage, and the rotation deadline rules. The renewal Job, which
 * writes this Secret routinely, is exempt from the webhook; these rules guard everyone else.
 */
import { publicKeysEqual, sha256Fingerprint, type Certificate } from '../pki/index.ts';
import { issuerSecretKeys } from '../secrets/layout.ts';
import type { Decoded, IssuerState, KeyPairMaterial } from '../secrets/material.ts';
import { type SecretProblem, secretReasons } from '../secrets/reasons.ts';
import { type MaterialKey, keyBelongsTo } from './certificate-memo.ts';
import { validationCodes } from './codes.ts';
import { checkDeadline } from './deadline-rules.ts';
import { type Finding, error, secretPath } from './finding.ts';

/** An issuer Secret reduced to what the rules compare. */
export interface IssuerView {
  readonly certificate: Certificate;
  /** The material it was read from, for key matches (its private key is not made for them). */
  readonly key: MaterialKey;
  /** The CA this one replaced, during a default-provider rotation. */
  readonly previousCa?: Certificate;
  readonly until?: Date;
}

export type DecodedIssuer = IssuerView | { readonly problem: SecretProblem };

/** The default provider's decoded issuer Secret as a view (absent is not an input here). */
export function viewDefaultIssuer(state: IssuerState): DecodedIssuer {
  if (state.state === 'unparsable') return { problem: state.problem };
  if (state.state === 'absent') {
    const key = issuerSecretKeys.certificate;
    return {
      problem: { key, reason: secretReasons.KeyMissing, message: 'The issuer Secret is empty.' },
    };
  }
  const { certificate, rotation } = state.material;
  const key = state.material;
  return rotation === undefined
    ? { certificate, key }
    : { certificate, key, previousCa: rotation.previousCa, until: rotation.until };
}

/** cert-manager's CA Secret (tls.crt, tls.key) as a view. */
export function viewKeyPairIssuer(decoded: Decoded<KeyPairMaterial>): DecodedIssuer {
  if (decoded.state === 'unparsable') return { problem: decoded.problem };
  return { certificate: decoded.material.chain[0], key: decoded.material };
}

export interface IssuerSubject {
  readonly name: string;
  readonly label: string;
  readonly old: DecodedIssuer | undefined;
  readonly next: DecodedIssuer;
  readonly now: Date;
}

function isView(issuer: DecodedIssuer | undefined): issuer is IssuerView {
  return issuer !== undefined && !('problem' in issuer);
}

function sameCertificate(a: Certificate, b: Certificate): boolean {
  return sha256Fingerprint(a) === sha256Fingerprint(b);
}

/** Material problems stop the checks: the first of them is returned alone. */
function materialFinding({ name, label, next }: IssuerSubject): Finding | undefined {
  if (!isView(next)) {
    return error(
      validationCodes.SecretUnparsable,
      secretPath(name, next.problem.key),
      `${next.problem.message} Restore the issuer Secret from its backup.`,
    );
  }
  if (!keyBelongsTo(next.key, next.certificate)) {
    return error(
      validationCodes.KeyMismatch,
      secretPath(name, 'tls.key'),
      `tls.key of the issuer Secret ${label} does not belong to its CA certificate in tls.crt: restore the issuer Secret from its backup.`,
    );
  }
  if (!next.certificate.ca) {
    return error(
      validationCodes.IssuerNotCa,
      secretPath(name, 'tls.crt'),
      `The certificate in the issuer Secret ${label} is not a CA (basicConstraints CA:TRUE): restore the issuer Secret from its backup.`,
    );
  }
  return undefined;
}

function lineageFinding({ name, label, old, next }: IssuerSubject): Finding | undefined {
  if (!isView(old) || !isView(next) || sameCertificate(old.certificate, next.certificate)) {
    return undefined;
  }
  const before = old.certificate.subject;
  const after = next.certificate.subject;
  const renewal = before === after && publicKeysEqual(old.certificate, next.certificate);
  const rotation =
    next.previousCa !== undefined && sameCertificate(next.previousCa, old.certificate);
  return renewal || rotation
    ? undefined
    : error(
        validationCodes.UnrelatedCaReplacement,
        secretPath(name, 'tls.crt'),
        `The issuer Secret ${label} would replace its CA ${before} with the unrelated CA ${after}: ` +
          'the Job refuses to replace existing identities with an unrelated CA; restore the issuer Secret from its backup, or switch providers with new Secret names.',
      );
}

export function checkIssuer(subject: IssuerSubject): Finding[] {
  const material = materialFinding(subject);
  if (material !== undefined) return [material];
  const { name, label, old, next, now } = subject;
  const lineage = lineageFinding(subject);
  return [
    ...(lineage === undefined ? [] : [lineage]),
    ...checkDeadline({
      name,
      label,
      until: isView(next) ? next.until : undefined,
      before: isView(old) ? old.until : undefined,
      mode: 'write',
      now,
    }),
  ];
}
