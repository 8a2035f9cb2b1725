/**
 * What only OpenSSL tells about a certificate: its subject key's type and curve or size, and
 * whether it issued itself. Read natively when first asked for (only the frontend TLS policy
 * asks; the webhook's Secret review does not) and remembered as plain data, so no native
 * object outlives the call (see certificate.ts).
 */
import { type AsymmetricKeyDetails, type KeyType, X509Certificate } from 'node:crypto';
import type { Certificate } from './certificate.ts';
import { RecentResults } from './recent-results.ts';

/** What a KeyObject tells about a key without being kept: type and curve or size. */
export interface PublicKeyShape {
  readonly asymmetricKeyType?: KeyType | undefined;
  readonly asymmetricKeyDetails?: AsymmetricKeyDetails | undefined;
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
 * The key details of a certificate. Never throws for a certificate OpenSSL cannot decode: its
 * key then has no type, which the policy refuses.
 */
export function keyDetails(certificate: Certificate): KeyDetails {
  return keyDetailsCache.remember(certificate.sha256, () => {
    let native: X509Certificate;
    try {
      native = new X509Certificate(certificate.der);
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
