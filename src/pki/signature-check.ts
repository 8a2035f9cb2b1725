/**
 * A certificate's signature checked without native objects that outlive the call: OpenSSL
 * verifies the signed TBSCertificate bytes with the issuer's SubjectPublicKeyInfo passed as
 * DER, so no KeyObject or X509Certificate is made for the common algorithms (RSA PKCS#1 v1.5
 * and ECDSA with SHA-1 to SHA-512, Ed25519, Ed448). Anything else (RSA-PSS, MD5, unknown
 * OIDs) goes to Node's X509Certificate.verify, whose objects die young. As OpenSSL's
 * X509_verify does, the signature AlgorithmIdentifier inside the TBSCertificate must equal
 * the outer one, and the issuer's key must be of the signature's family.
 */
import { X509Certificate, createPublicKey, verify } from 'node:crypto';
import type { Certificate, SignedParts } from './certificate.ts';
import { RecentResults } from './recent-results.ts';

const rsaKey = '1.2.840.113549.1.1.1';
const ecKey = '1.2.840.10045.2.1';

/** Signature OIDs checked directly: the hash Node names and the key algorithm OID it needs. */
const direct: Readonly<Record<string, readonly [hash: string | null, keyOid: string]>> = {
  '1.2.840.113549.1.1.5': ['sha1', rsaKey],
  '1.2.840.113549.1.1.14': ['sha224', rsaKey],
  '1.2.840.113549.1.1.11': ['sha256', rsaKey],
  '1.2.840.113549.1.1.12': ['sha384', rsaKey],
  '1.2.840.113549.1.1.13': ['sha512', rsaKey],
  '1.2.840.10045.4.1': ['sha1', ecKey],
  '1.2.840.10045.4.3.1': ['sha224', ecKey],
  '1.2.840.10045.4.3.2': ['sha256', ecKey],
  '1.2.840.10045.4.3.3': ['sha384', ecKey],
  '1.2.840.10045.4.3.4': ['sha512', ecKey],
  '1.3.101.112': [null, '1.3.101.112'],
  '1.3.101.113': [null, '1.3.101.113'],
};

/**
 * True when the SubjectPublicKeyInfo `issuerSpki` (with its algorithm OID) verifies the
 * certificate's signature; false for any failure, including keys OpenSSL cannot read.
 */
export function verifySignature(
  signed: SignedParts,
  issuerSpki: Uint8Array,
  issuerKeyAlgorithm: string,
): boolean {
  if (!signed.algorithmsAgree) return false;
  const known = direct[signed.signatureAlgorithm];
  try {
    if (known === undefined) {
      const key = createPublicKey({ key: Buffer.from(issuerSpki), format: 'der', type: 'spki' });
      return new X509Certificate(signed.der).verify(key);
    }
    const [hash, keyOid] = known;
    if (issuerKeyAlgorithm !== keyOid) return false;
    return verify(
      hash,
      signed.tbs,
      {
        key: Buffer.from(issuerSpki.buffer, issuerSpki.byteOffset, issuerSpki.byteLength),
        format: 'der',
        type: 'spki',
      },
      signed.signature,
    );
  } catch {
    return false;
  }
}

/**
 * Signature checks by the SHA-256 of subject and issuer. @default 4096
 * Keyed by strings, not objects, so the garbage collector has no weak tables to trace.
 */
const maxRememberedSignatures = 4096;
const signatures = new RecentResults<boolean>(maxRememberedSignatures);

/** True when `issuer`'s public key verifies the signature of `subject` (remembered per pair). */
export function isSignedBy(subject: Certificate, issuer: Certificate): boolean {
  return signatures.remember(`${subject.sha256}:${issuer.sha256}`, () =>
    verifySignature(subject.signed, issuer.spki, issuer.spkiAlgorithm),
  );
}
