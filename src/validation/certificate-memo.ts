/**
 * Remembered answers about decoded certificates and keys. Decoded material is immutable and
 * the webhook meets the same objects again (SecretDecoder hands out cached material), so the
 * answers are kept per object, weakly: they go when the material goes.
 */
import {
  type CryptoKey,
  certificateFingerprint,
  keyMatchesCertificate,
  type x509,
} from '../pki/index.ts';

const fingerprints = new WeakMap<x509.X509Certificate, string>();
const keyMatches = new WeakMap<CryptoKey, WeakMap<x509.X509Certificate, boolean>>();

/** certificateFingerprint, computed once per certificate object. */
export function fingerprintOf(certificate: x509.X509Certificate): string {
  let print = fingerprints.get(certificate);
  if (print === undefined) {
    print = certificateFingerprint(certificate);
    fingerprints.set(certificate, print);
  }
  return print;
}

/** keyMatchesCertificate, computed once per key and certificate object. */
export function keyBelongsTo(privateKey: CryptoKey, certificate: x509.X509Certificate): boolean {
  let byCertificate = keyMatches.get(privateKey);
  const known = byCertificate?.get(certificate);
  if (known !== undefined) return known;
  const matches = keyMatchesCertificate(privateKey, certificate);
  if (byCertificate === undefined) {
    byCertificate = new WeakMap();
    keyMatches.set(privateKey, byCertificate);
  }
  byCertificate.set(certificate, matches);
  return matches;
}
