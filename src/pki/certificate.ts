/**
 * A decoded certificate: the one type every reader of a certificate's fields uses (names,
 * validity, extensions, key, fingerprint), decoded once from its DER by one strict, bounded
 * walk (der-certificate.ts) and kept as plain data with it, so verifying the same chain again
 * (every request of a connection) costs no decoding. No pure-JS ASN.1 object model, which
 * costs a millisecond or more a certificate, and no native object: native objects
 * (X509Certificate, KeyObject) are freed by weak callbacks inside the garbage collector's
 * pauses, and a stream of new certificates (a webhook reviewing Secrets it has not seen) made
 * those pauses the tail of its latency; kept in caches, they died in the old generation,
 * thousands at once, and one full collection stalled the webhook for over half a second.
 *
 * @peculiar/x509 builds and signs certificates (generate.ts); it never reads one here.
 */
import { hash } from 'node:crypto';
import { readDerCertificate } from './der-certificate.ts';

/** Characters of base64 on one PEM line, as OpenSSL and @peculiar/x509 write them. */
const pemLineLength = 64;

/** The parts of a certificate a signature check reads (see signature-check.ts). */
export interface SignedParts {
  /** The whole certificate DER (for the fallback), the whole of its buffer. */
  readonly der: Uint8Array<ArrayBuffer>;
  readonly tbs: Uint8Array;
  readonly signature: Uint8Array;
  /** OID of the outer signatureAlgorithm. */
  readonly signatureAlgorithm: string;
  /** True when the TBSCertificate's signature AlgorithmIdentifier equals the outer one. */
  readonly algorithmsAgree: boolean;
}

export class Certificate {
  /** The DER, the whole of its own buffer (a copy of what was decoded). */
  readonly der: Uint8Array<ArrayBuffer>;
  /**
   * Distinguished names as Node's X509Certificate prints them on one line: attributes in
   * certificate order, `, ` between RDNs (`CN=ca, O=org`), OpenSSL's escapes (der-names.ts).
   */
  readonly subject: string;
  readonly issuer: string;
  /** The serial number in lower-case hex, without the sign byte (00) a positive one may need. */
  readonly serialNumber: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** basicConstraints CA flag; false when the extension is absent. */
  readonly ca: boolean;
  /** basicConstraints pathLenConstraint, when present. */
  readonly pathLength: number | undefined;
  /** keyUsage flags (digitalSignature 1, keyCertSign 32), or undefined when absent (any usage). */
  readonly keyUsage: number | undefined;
  /** extendedKeyUsage OIDs, or undefined when the extension is absent. */
  readonly extendedKeyUsages: readonly string[] | undefined;
  /** dNSName entries of the subjectAltName, as written. */
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

  private constructor(der: Uint8Array<ArrayBuffer>) {
    const read = readDerCertificate(der);
    this.der = der;
    this.subject = read.subject;
    this.issuer = read.issuer;
    this.serialNumber = read.serialNumber;
    this.notBefore = new Date(read.notBefore);
    this.notAfter = new Date(read.notAfter);
    this.ca = read.ca;
    this.pathLength = read.pathLength;
    this.keyUsage = read.keyUsage;
    this.extendedKeyUsages = read.extendedKeyUsages;
    this.dnsNames = read.dnsNames;
    this.signatureAlgorithm = read.signatureAlgorithm;
    this.pssHash = read.pssHash;
    // One-shot hashing: no Hash object, which is another native handle for the collector.
    this.sha256 = hash('sha256', der, 'hex');
    this.spki = read.spki;
    this.spkiAlgorithm = read.spkiAlgorithm;
    this.signed = {
      der,
      tbs: read.tbs,
      signature: read.signature,
      signatureAlgorithm: read.signatureAlgorithm,
      algorithmsAgree: read.signatureAlgorithmsAgree,
    };
  }

  /**
   * Decodes a DER certificate (copied: the certificate owns its bytes). Throws `MalformedDer`
   * for anything undecodable or not allowed (see der-certificate.ts), so every field read
   * later is there.
   */
  static fromDer(der: Uint8Array): Certificate {
    return new Certificate(new Uint8Array(der));
  }

  /** The PEM block of the DER, base64 in lines of 64 characters, without a final newline. */
  toPem(): string {
    const base64 = Buffer.from(this.der.buffer).toString('base64');
    const lines: string[] = [];
    for (let at = 0; at < base64.length; at += pemLineLength) {
      lines.push(base64.slice(at, at + pemLineLength));
    }
    return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----`;
  }
}
