/**
 * One revision of mounted TLS material, decoded and judged. Pure: bytes in, decoded material
 * or a problem out; time-dependent rules take `now`. Used by the agent (server identity) and
 * the controller (client identity) alike.
 *
 * - `tls.crt`: the own certificate, then intermediates; `tls.key`: its private key.
 * - `ca.crt`: the CAs the peer's certificate must chain to.
 * - `previous-ca.crt` + `previous-ca-until` (RFC 3339 UTC): CAs also trusted until that
 *   deadline, which must be at most 24 hours ahead; one without the other is invalid.
 */
import { createHash } from 'node:crypto';
import { type Certificate, keyMatchesCertificate } from '../pki/index.ts';
import type { Problem } from '../problem.ts';
import { decodeIdentity } from '../secrets/identity-secret.ts';
import { identitySecretKeys, maxPreviousTrustAheadMs } from '../secrets/layout.ts';
import type { PreviousTrust } from '../secrets/material.ts';
import { type SecretReason, secretReasons } from '../secrets/reasons.ts';
import { type DataPlace, inDirectory } from '../secrets/secret-fields.ts';
import { type MaterialReason, materialReasons } from './reasons.ts';

/** The files of a mounted identity Secret, by Secret key. */
export const tlsFileNames = [
  identitySecretKeys.certificate,
  identitySecretKeys.privateKey,
  identitySecretKeys.trust,
  identitySecretKeys.previousTrust,
  identitySecretKeys.previousTrustUntil,
] as const;

export interface TlsMaterial {
  /** SHA-256 over every file's name and bytes: equal bytes, equal digest. */
  readonly digest: string;
  /** tls.crt: the own certificate first. */
  readonly chain: readonly [Certificate, ...Certificate[]];
  /** tls.crt as mounted, for the TLS stack. */
  readonly certificatePem: string;
  /** tls.key as mounted, for the TLS stack. Never logged. */
  readonly privateKeyPem: string;
  /** ca.crt. */
  readonly trust: readonly Certificate[];
  readonly previousTrust?: PreviousTrust;
}

export type MaterialProblem = Problem<MaterialReason>;

export type MaterialDecoding =
  | { readonly ok: true; readonly material: TlsMaterial }
  | ({ readonly ok: false; readonly digest: string } & MaterialProblem);

/** The trust in force at one instant. */
export interface EffectiveTrust {
  /** ca.crt, plus previous-ca.crt while its deadline lies ahead. */
  readonly anchors: readonly Certificate[];
  /** The previous-CA deadline, while previous trust is in force. */
  readonly previousUntil: Date | undefined;
}

export type MaterialStatus =
  | { readonly ok: true; readonly material: TlsMaterial; readonly trust: EffectiveTrust }
  | ({ readonly ok: false } & MaterialProblem);

/** Digest of a set of files, independent of the order they were read in. */
export function filesDigest(files: Readonly<Record<string, Uint8Array>>): string {
  const hash = createHash('sha256');
  for (const name of Object.keys(files).sort()) {
    const bytes = files[name];
    if (bytes === undefined) continue;
    hash.update(`${name}\0${bytes.byteLength}\0`).update(bytes);
  }
  return `sha256:${hash.digest('hex')}`;
}

function text(bytes: Uint8Array | undefined): string {
  return bytes === undefined
    ? ''
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** How messages name the mounted files, and what to do when some are missing. */
function mountedPlace(where: string): DataPlace {
  return inDirectory(where, {
    missing: (name) =>
      `${where} has no ${name}; project the identity Secret with tls.crt, tls.key and ca.crt.`,
    incomplete: (present, absent) =>
      `${where} has ${present.join(' and ')} without ${absent.join(' and ')}; set both during a CA rotation or remove both.`,
  });
}

const problemReasons: Partial<Record<SecretReason, MaterialReason>> = {
  [secretReasons.KeyMissing]: materialReasons.MaterialMissing,
  [secretReasons.KeysIncomplete]: materialReasons.PreviousTrustIncomplete,
};

/**
 * Decodes one revision of the files. `where` names the directory in messages, for example
 * `/etc/haptic/agent-tls`. Never throws: bad input is a problem with its reason.
 */
export function decodeTlsMaterial(
  files: Readonly<Record<string, Uint8Array>>,
  where: string,
): MaterialDecoding {
  const digest = filesDigest(files);
  const decoded = decodeIdentity(files, mountedPlace(where));
  if (decoded.state === 'unparsable') {
    const { reason, message } = decoded.problem;
    return {
      ok: false,
      digest,
      reason: problemReasons[reason] ?? materialReasons.MaterialUnparsable,
      message,
    };
  }
  const { chain, privateKey, trust, previousTrust } = decoded.material;
  const { certificate, privateKey: keyName } = identitySecretKeys;
  if (!keyMatchesCertificate(privateKey, chain[0])) {
    return {
      ok: false,
      digest,
      reason: materialReasons.KeyMismatch,
      message:
        `${keyName} in ${where} does not belong to the certificate ${chain[0].subject} in ${certificate}; ` +
        'update tls.crt and tls.key together.',
    };
  }
  const material: TlsMaterial = {
    digest,
    chain,
    certificatePem: text(files[certificate]),
    privateKeyPem: text(files[keyName]),
    trust,
  };
  return {
    ok: true,
    material: previousTrust === undefined ? material : { ...material, previousTrust },
  };
}

/**
 * Whether decoded material may be used at `now`, and the trust in force then: the own
 * certificate must be within its validity, and a previous-CA deadline at most 24 hours ahead
 * (a passed deadline simply ends previous trust).
 */
export function materialStatusAt(
  decoding: MaterialDecoding,
  now: Date,
  where: string,
): MaterialStatus {
  if (!decoding.ok) return { ok: false, reason: decoding.reason, message: decoding.message };
  const { material } = decoding;
  const at = now.getTime();
  const previous = material.previousTrust;
  if (previous !== undefined && previous.until.getTime() - at > maxPreviousTrustAheadMs) {
    return {
      ok: false,
      reason: materialReasons.PreviousTrustDeadlineTooFar,
      message:
        `previous-ca-until in ${where} is ${previous.until.toISOString()}, more than 24 hours ahead; ` +
        'set a deadline within 24 hours (one hour is usual).',
    };
  }
  const [leaf] = material.chain;
  if (at > leaf.notAfter.getTime()) {
    return {
      ok: false,
      reason: materialReasons.IdentityExpired,
      message: `The certificate ${leaf.subject} in ${where} expired at ${leaf.notAfter.toISOString()}; renew it and update the Secret.`,
    };
  }
  if (at < leaf.notBefore.getTime()) {
    return {
      ok: false,
      reason: materialReasons.IdentityNotYetValid,
      message: `The certificate ${leaf.subject} in ${where} is not valid before ${leaf.notBefore.toISOString()}; check the clocks.`,
    };
  }
  return { ok: true, material, trust: trustAt(material, now) };
}

/**
 * The anchors in force at `now`: ca.crt, plus previous-ca.crt while its deadline lies ahead
 * but no more than 24 hours ahead. No other check: this is what a TLS context may present
 * even while the material is judged invalid for other reasons (an expired own certificate).
 */
export function trustAt(material: TlsMaterial, now: Date): EffectiveTrust {
  const previous = material.previousTrust;
  const remaining = previous === undefined ? 0 : previous.until.getTime() - now.getTime();
  if (previous === undefined || remaining <= 0 || remaining > maxPreviousTrustAheadMs) {
    return { anchors: material.trust, previousUntil: undefined };
  }
  return { anchors: [...material.trust, ...previous.certificates], previousUntil: previous.until };
}
