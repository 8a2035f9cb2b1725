/** Node TLS options from mounted material: TLS 1.3 only, the own identity, only our anchors. */
import type { SecureContextOptions } from 'node:tls';
import { encodeCertificateChain } from '../pki/index.ts';
import type { EffectiveTrust, TlsMaterial } from './tls-material.ts';

/**
 * The identity and anchors for a TLS context. `ca` is always given explicitly (possibly
 * empty), so Node never falls back to its bundled public root CAs.
 */
export function secureContextOptions(
  material: TlsMaterial,
  trust: EffectiveTrust,
): SecureContextOptions & { ca: string[] } {
  return {
    cert: material.certificatePem,
    key: material.privateKeyPem,
    ca: trust.anchors.map((anchor) => encodeCertificateChain([anchor])),
    minVersion: 'TLSv1.3',
  };
}
