/**
 * The fields chain verification reads from a certificate, decoded once per certificate object
 * and cached, so verifying the same chain again (every request of a connection) costs no
 * ASN.1 decoding. Signatures are checked with Node's native X.509 code, also cached.
 */
import { X509Certificate as NativeCertificate } from 'node:crypto';
import { x509 } from './x509.ts';

/** Extended key usages the product checks, by name. */
export type Purpose = 'serverAuth' | 'clientAuth';

export interface CertificateFacts {
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
  readonly native: NativeCertificate;
}

const factsCache = new WeakMap<x509.X509Certificate, CertificateFacts>();
const signatureCache = new WeakMap<x509.X509Certificate, WeakMap<x509.X509Certificate, boolean>>();

function decodeFacts(certificate: x509.X509Certificate): CertificateFacts {
  const basic = certificate.getExtension(x509.BasicConstraintsExtension);
  const usage = certificate.getExtension(x509.KeyUsagesExtension);
  const extended = certificate.getExtension(x509.ExtendedKeyUsageExtension);
  const san = certificate.getExtension(x509.SubjectAlternativeNameExtension);
  return {
    subject: certificate.subject,
    issuer: certificate.issuer,
    notBefore: certificate.notBefore.getTime(),
    notAfter: certificate.notAfter.getTime(),
    ca: basic?.ca ?? false,
    pathLength: basic?.pathLength,
    keyUsage: usage?.usages,
    extendedKeyUsages: extended?.usages.map(String),
    dnsNames: (san?.names.items ?? [])
      .filter((name) => name.type === 'dns')
      .map((name) => name.value.toLowerCase()),
    native: new NativeCertificate(new Uint8Array(certificate.rawData)),
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

/** True when `issuer`'s public key verifies the signature of `subject` (cached per pair). */
export function isSignedBy(subject: x509.X509Certificate, issuer: x509.X509Certificate): boolean {
  let byIssuer = signatureCache.get(subject);
  const cached = byIssuer?.get(issuer);
  if (cached !== undefined) return cached;
  let valid: boolean;
  try {
    valid = certificateFacts(subject).native.verify(certificateFacts(issuer).native.publicKey);
  } catch {
    valid = false;
  }
  if (byIssuer === undefined) {
    byIssuer = new WeakMap();
    signatureCache.set(subject, byIssuer);
  }
  byIssuer.set(issuer, valid);
  return valid;
}

/** OID of each purpose. */
export const purposeOids = {
  serverAuth: x509.ExtendedKeyUsage.serverAuth,
  clientAuth: x509.ExtendedKeyUsage.clientAuth,
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
