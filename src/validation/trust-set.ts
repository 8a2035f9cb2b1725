/**
 * The trust set of an identity Secret and how its CAs relate: which CAs its peers accept now,
 * which ones are the same CA (a renewal keeps subject and key), and which ones anchor an
 * identity's certificate chain. Pure; the rules that judge a trust set are in trust-rules.ts.
 */
import type { IdentityTrust } from '../secrets/material.ts';
import { isSignedBy, publicKeysEqual, sha256Fingerprint, type Certificate } from '../pki/index.ts';

/** previous-ca.crt while previous-ca-until is ahead of `now`, else nothing. */
export function previousInForce(material: IdentityTrust, now: Date): readonly Certificate[] {
  const previous = material.previousTrust;
  return previous !== undefined && previous.until.getTime() > now.getTime()
    ? previous.certificates
    : [];
}

/** The CAs a peer accepts at `now`: ca.crt, and previous-ca.crt while previous-ca-until is ahead. */
export function acceptedCas(material: IdentityTrust, now: Date): readonly Certificate[] {
  return [...material.trust, ...previousInForce(material, now)];
}

/** A renewal keeps the CA's subject and key (cert-manager renews its root this way). */
export function isRenewalOf(candidate: Certificate, ca: Certificate): boolean {
  return candidate.subject === ca.subject && publicKeysEqual(candidate, ca);
}

/** True when `ca` is one of `known`, or a renewal of one of them. */
export function isKnownCa(ca: Certificate, known: readonly Certificate[]): boolean {
  const print = sha256Fingerprint(ca);
  return known.some((other) => sha256Fingerprint(other) === print || isRenewalOf(ca, other));
}

/** True when `ca` is a certificate of `chain` or signed one of them (an anchor of the chain). */
export function anchorsChain(ca: Certificate, chain: readonly Certificate[]): boolean {
  const print = sha256Fingerprint(ca);
  return chain.some(
    (certificate) => sha256Fingerprint(certificate) === print || isSignedBy(certificate, ca),
  );
}

/** The same certificates, in any order. */
export function sameCertificates(a: readonly Certificate[], b: readonly Certificate[]): boolean {
  const left = new Set(a.map(sha256Fingerprint));
  const right = new Set(b.map(sha256Fingerprint));
  return left.size === right.size && [...left].every((print) => right.has(print));
}

/** Subjects of certificates, as messages list them. */
export function subjectsOf(certificates: readonly Certificate[]): string {
  return certificates.map((certificate) => certificate.subject).join(', ');
}
