/**
 * When a certificate is due for renewal: 30 days before it expires, or, for a lifetime under
 * 90 days, when a third of the lifetime remains. The lifetime is the certificate's own
 * (notAfter − notBefore), so a changed validity setting only affects the next issuance.
 */
import type { Certificate } from '../pki/index.ts';

const dayMs = 86_400_000;

/** Time before expiry at which a certificate with a long lifetime renews. @default 30 days */
export const renewBeforeMs = 30 * dayMs;

/** Lifetimes shorter than this renew when a third of the lifetime remains. @default 90 days */
export const shortLifetimeMs = 90 * dayMs;

/** How long before its notAfter a certificate with this lifetime renews. */
export function renewBeforeFor(lifetimeMs: number): number {
  return lifetimeMs < shortLifetimeMs ? lifetimeMs / 3 : renewBeforeMs;
}

/** The moment the certificate becomes due for renewal. */
export function renewalTime(certificate: Certificate): Date {
  const notAfter = certificate.notAfter.getTime();
  return new Date(notAfter - renewBeforeFor(notAfter - certificate.notBefore.getTime()));
}

/** True from the renewal time on. */
export function isRenewalDue(certificate: Certificate, now: Date): boolean {
  return now.getTime() >= renewalTime(certificate).getTime();
}
