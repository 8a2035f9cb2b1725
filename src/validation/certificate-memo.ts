/**
 * Remembered key matches of decoded material. Decoded material is immutable and the webhook
 * meets the same objects again (SecretDecoder hands out cached material), so the answers are
 * kept per object, weakly: they go when the material goes. (Fingerprints and signatures are
 * remembered in src/pki, by the certificate's SHA-256.)
 */
import { type CryptoKey, keyMatchesCertificate, type x509 } from '../pki/index.ts';

const keyMatches = new WeakMap<CryptoKey, WeakMap<x509.X509Certificate, boolean>>();

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
