/** Certificate fingerprints, in the form `openssl x509 -noout -fingerprint -sha256` prints. */
import { createHash } from 'node:crypto';
import type { x509 } from './x509.ts';

/** SHA-256 of the certificate's DER, as colon-separated upper-case hex (`AB:CD:…`). */
export function certificateFingerprint(certificate: x509.X509Certificate): string {
  const digest = createHash('sha256')
    .update(new Uint8Array(certificate.rawData))
    .digest('hex')
    .toUpperCase();
  return digest.replace(/(..)(?!$)/g, '$1:');
}
