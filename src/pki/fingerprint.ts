/** Certificate fingerprints: SHA-256 of the certificate's DER. */
import type { Certificate } from './certificate.ts';

/** Lower-case hex without separators (how the TLS reports and `haptic certificates status` name CAs). */
export function sha256Fingerprint(certificate: Certificate): string {
  return certificate.sha256;
}

/** Colon-separated upper-case hex (`AB:CD:…`), as `openssl x509 -noout -fingerprint -sha256` prints. */
export function certificateFingerprint(certificate: Certificate): string {
  return sha256Fingerprint(certificate)
    .toUpperCase()
    .replace(/(..)(?!$)/g, '$1:');
}

/** The first 12 hex digits of a fingerprint, as messages and `haptic certificates status` show it. */
export function shortFingerprint(fingerprint: string): string {
  return fingerprint.slice(0, 12);
}
