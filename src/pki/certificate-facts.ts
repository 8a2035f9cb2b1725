/**
 * The fields chain verification and the validator read from a certificate, decoded once per
 * certificate and kept with it, so verifying the same chain again (every request of a
 * connection) costs no decoding. One strict, bounded walk over the DER reads them
 * (der-certificate.ts): no pure-JS ASN.1 object model, which costs a millisecond or more a
 * certificate, and no native X509Certificate. Signatures are checked natively, cached.
 *
 * The facts are plain data, and reading them makes no native object (X509Certificate,
 * KeyObject): native objects are freed by weak callbacks inside the garbage collector's
 * pauses, and a stream of new certificates (a webhook reviewing Secrets it has not seen)
 * made those pauses the tail of its latency; kept in caches, they died in the old
 * generation, thousands at once, and one full collection stalled the webhook for over half
 * a second. Signatures are checked over the signed bytes with the issuer's
 * SubjectPublicKeyInfo handed to OpenSSL as DER (signature-check.ts), which makes no KeyObject.
 */
import {
  type AsymmetricKeyDetails,
  type KeyType,
  X509Certificate as NativeCertificate,
  hash,
} from 'node:crypto';
import { deferredFacts } from './deferred-certificate.ts';
import { readDerCertificate } from './der-certificate.ts';
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

/**
 * Facts of certificates made here (issued, or built by @peculiar/x509): a few, long-lived.
 * Decoded certificates carry theirs (deferred-certificate.ts).
 */
const factsCache = new WeakMap<x509.X509Certificate, CertificateFacts>();

/**
 * Signature checks by the SHA-256 of subject and issuer. @default 4096
 * Keyed by strings, not objects, so the garbage collector has no weak tables to trace.
 */
const maxRememberedSignatures = 4096;
const signatures = new RecentResults<boolean>(maxRememberedSignatures);

/**
 * Decodes the facts of a DER certificate (copied: the facts own their bytes). Throws
 * `MalformedDer` for anything undecodable or not allowed (see der-certificate.ts).
 */
export function decodeCertificateFacts(given: Uint8Array): CertificateFacts {
  const der = new Uint8Array(given);
  const read = readDerCertificate(der);
  return {
    subject: read.subject,
    issuer: read.issuer,
    notBefore: read.notBefore,
    notAfter: read.notAfter,
    ca: read.ca,
    pathLength: read.pathLength,
    keyUsage: read.keyUsage,
    extendedKeyUsages: read.extendedKeyUsages,
    dnsNames: read.dnsNames.map((name) => name.toLowerCase()),
    signatureAlgorithm: read.signatureAlgorithm,
    pssHash: read.pssHash,
    sha256: hash('sha256', der, 'hex'),
    spki: read.spki,
    spkiAlgorithm: read.spkiAlgorithm,
    signed: {
      der,
      tbs: read.tbs,
      signature: read.signature,
      signatureAlgorithm: read.signatureAlgorithm,
      algorithmsAgree: read.signatureAlgorithmsAgree,
    },
  };
}

/** The decoded facts of a certificate (cached per object). Throws only for undecodable input. */
export function certificateFacts(certificate: x509.X509Certificate): CertificateFacts {
  let facts = deferredFacts(certificate) ?? factsCache.get(certificate);
  if (facts === undefined) {
    facts = decodeCertificateFacts(new Uint8Array(certificate.rawData));
    factsCache.set(certificate, facts);
  }
  return facts;
}

/** What chainRefusal (src/validation/tls-key-policy.ts) reads natively, by the certificate's SHA-256. */
export interface KeyDetails {
  /**
   * The subject public key's type and details; no type when OpenSSL cannot read the key, or
   * the certificate (then the key is refused as unknown, see chainRefusal).
   */
  readonly publicKey: PublicKeyShape;
  /** OpenSSL's check_issued of the certificate by itself: it names itself as issuer (self-issued). */
  readonly selfIssued: boolean;
}

/** Key details remembered. @default 1024 */
const maxRememberedKeyDetails = 1024;
const keyDetailsCache = new RecentResults<KeyDetails>(maxRememberedKeyDetails);

/** What a certificate OpenSSL cannot decode has: no key type (so its key is refused), not self-issued. */
const unreadableKeyDetails: KeyDetails = { publicKey: {}, selfIssued: false };

/**
 * The key details of a certificate, read natively when first asked for (only the frontend
 * TLS policy asks; the webhook's Secret review does not) and remembered as plain data. Never
 * throws for a certificate OpenSSL cannot decode: its key then has no type, which the policy
 * refuses.
 */
export function keyDetails(certificate: x509.X509Certificate): KeyDetails {
  const facts = certificateFacts(certificate);
  return keyDetailsCache.remember(facts.sha256, () => {
    let native: NativeCertificate;
    try {
      native = new NativeCertificate(facts.signed.der);
    } catch {
      return unreadableKeyDetails;
    }
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
