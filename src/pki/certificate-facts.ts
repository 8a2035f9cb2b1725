/**
 * The fields chain verification and the validator read from a certificate, decoded once per
 * certificate object and cached, so verifying the same chain again (every request of a
 * connection) costs no decoding. Node's native X.509 code (OpenSSL) reads the DER, and the
 * few fields it does not expose come from a bounded walk over the same DER
 * (der-extensions.ts): no pure-JS ASN.1 decoding, which costs a millisecond or more a
 * certificate. Signatures are checked natively, also cached.
 *
 * The facts are plain data: no native object (X509Certificate, KeyObject) is kept with them.
 * Native objects are freed by weak callbacks inside the garbage collector's pause; kept in
 * caches they die in the old generation, thousands at once, and one full collection stalled
 * the webhook for over half a second. The X509Certificate that confirms the DER is dropped
 * once read, and signatures are checked over the signed bytes with the issuer's
 * SubjectPublicKeyInfo handed to OpenSSL as DER (signature-check.ts), which makes no
 * KeyObject at all.
 */
import {
  type AsymmetricKeyDetails,
  type KeyType,
  X509Certificate as NativeCertificate,
  hash,
} from 'node:crypto';
import { readDerExtensions } from './der-extensions.ts';
import { RecentResults } from './recent-results.ts';
import { type SignedParts, verifySignature } from './signature-check.ts';
import type { x509 } from './x509.ts';

/** Extended key usages the product checks, by name. */
export type Purpose = 'serverAuth' | 'clientAuth';

export interface CertificateFacts {
  /** Distinguished names, attributes in certificate order joined by `, ` (`CN=ca, O=org`). */
  readonly subject: string;
  readonly issuer: string;
  /** Milliseconds since the epoch. */
  readonly notBefore: number;
  /** Milliseconds since the epoch. */
  readonly notAfter: number;
  /** basicConstraints CA flag; false when the extension is absent. */
  readonly ca: boolean;
  /** basicConstraints pathLenConstraint, when present. */
  readonly pathLength: number | undefined;
  /** keyUsage flags, or undefined when the extension is absent (any usage). */
  readonly keyUsage: number | undefined;
  /** extendedKeyUsage OIDs, or undefined when the extension is absent. */
  readonly extendedKeyUsages: readonly string[] | undefined;
  /** dNSName entries of the subjectAltName, lower-cased. */
  readonly dnsNames: readonly string[];
  /** OID of the signature algorithm. */
  readonly signatureAlgorithm: string;
  /** RSA-PSS only: OID of the hash its parameters name; undefined for the default, SHA-1. */
  readonly pssHash: string | undefined;
  /** SHA-256 of the DER, lower-case hex. */
  readonly sha256: string;
  /** The subject public key as DER SubjectPublicKeyInfo. */
  readonly spki: Uint8Array;
  /** OID of its algorithm (1.2.840.10045.2.1 for EC, 1.2.840.113549.1.1.1 for RSA). */
  readonly spkiAlgorithm: string;
  /** The signed parts, for signature checks (see signature-check.ts). */
  readonly signed: SignedParts;
}

/** What a KeyObject tells about a key without being kept: type and curve or size. */
export interface PublicKeyShape {
  readonly asymmetricKeyType?: KeyType | undefined;
  readonly asymmetricKeyDetails?: AsymmetricKeyDetails | undefined;
}

const factsCache = new WeakMap<x509.X509Certificate, CertificateFacts>();

/**
 * Signature checks by the SHA-256 of subject and issuer. @default 4096
 * Keyed by strings, not objects, so the garbage collector has no weak tables to trace.
 */
const maxRememberedSignatures = 4096;
const signatures = new RecentResults<boolean>(maxRememberedSignatures);

/** Node prints a name one attribute a line; messages show them on one line. */
function nameText(multiline: string): string {
  return multiline.replace(/\n/g, ', ');
}

function decodeFacts(certificate: x509.X509Certificate): CertificateFacts {
  const der = new Uint8Array(certificate.rawData);
  // Confirms the DER with OpenSSL and reads names and dates; not kept (see above). Its public
  // key is not read here: every KeyObject is one more native handle to free.
  const native = new NativeCertificate(der);
  const extensions = readDerExtensions(der);
  return {
    subject: nameText(native.subject),
    issuer: nameText(native.issuer),
    notBefore: native.validFromDate.getTime(),
    notAfter: native.validToDate.getTime(),
    ca: extensions.ca,
    pathLength: extensions.pathLength,
    keyUsage: extensions.keyUsage,
    extendedKeyUsages: extensions.extendedKeyUsages,
    dnsNames: extensions.dnsNames.map((name) => name.toLowerCase()),
    signatureAlgorithm: extensions.signatureAlgorithm,
    pssHash: extensions.pssHash,
    sha256: hash('sha256', der, 'hex'),
    spki: extensions.spki,
    spkiAlgorithm: extensions.spkiAlgorithm,
    signed: {
      der,
      tbs: extensions.tbs,
      signature: extensions.signature,
      signatureAlgorithm: extensions.signatureAlgorithm,
      algorithmsAgree: extensions.signatureAlgorithmsAgree,
    },
  };
}

/** The decoded facts of a certificate (cached per object). Throws only for undecodable input. */
export function certificateFacts(certificate: x509.X509Certificate): CertificateFacts {
  let facts = factsCache.get(certificate);
  if (facts === undefined) {
    facts = decodeFacts(certificate);
    factsCache.set(certificate, facts);
  }
  return facts;
}

/** What chainRefusal (src/validation/tls-key-policy.ts) reads natively, by the certificate's SHA-256. */
export interface KeyDetails {
  /** The subject public key's type and details; no type when OpenSSL cannot read the key. */
  readonly publicKey: PublicKeyShape;
  /** OpenSSL's check_issued of the certificate by itself: it names itself as issuer (self-issued). */
  readonly selfIssued: boolean;
}

/** Key details remembered. @default 1024 */
const maxRememberedKeyDetails = 1024;
const keyDetailsCache = new RecentResults<KeyDetails>(maxRememberedKeyDetails);

/**
 * The key details of a certificate, read natively when first asked for (only the frontend
 * TLS policy asks; the webhook's Secret review does not) and remembered as plain data.
 */
export function keyDetails(certificate: x509.X509Certificate): KeyDetails {
  const facts = certificateFacts(certificate);
  return keyDetailsCache.remember(facts.sha256, () => {
    const native = new NativeCertificate(facts.signed.der);
    let publicKey: PublicKeyShape;
    try {
      const key = native.publicKey;
      publicKey = {
        asymmetricKeyType: key.asymmetricKeyType,
        asymmetricKeyDetails: { ...key.asymmetricKeyDetails },
      };
    } catch {
      publicKey = {};
    }
    return { publicKey, selfIssued: native.checkIssued(native) };
  });
}

/** True when `issuer`'s public key verifies the signature of `subject` (remembered per pair). */
export function isSignedBy(subject: x509.X509Certificate, issuer: x509.X509Certificate): boolean {
  const signed = certificateFacts(subject);
  const signer = certificateFacts(issuer);
  return signatures.remember(`${signed.sha256}:${signer.sha256}`, () =>
    verifySignature(signed.signed, signer.spki, signer.spkiAlgorithm),
  );
}

/** OID of each purpose. */
export const purposeOids = {
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const satisfies Record<Purpose, string>;

/** True when a dNSName pattern (exact, or `*.` + parent for exactly one leftmost label) covers `name`. */
export function dnsNameMatches(pattern: string, name: string): boolean {
  const normalize = (value: string): string => value.toLowerCase().replace(/\.$/, '');
  const wanted = normalize(name);
  const given = normalize(pattern);
  if (!given.startsWith('*.')) return given === wanted;
  const dot = wanted.indexOf('.');
  return dot > 0 && wanted.slice(dot) === given.slice(1) && given.split('.').length > 2;
}
