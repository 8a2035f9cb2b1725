/**
 * The decoders of this directory behind one cache: identity, issuer and key-pair Secrets,
 * remembering recent results by content.
 * Decoding an identity Secret costs a few tenths of a millisecond (base64, certificates, a
 * private key OpenSSL reads, chain checks after it); the webhook sees the same Secret
 * contents again and again (the old object of every update, retries, dry runs), and decoded
 * material is immutable, so a bounded cache keyed by a hash of the bytes is safe. Chain
 * verification then also reuses its per-certificate caches.
 */
import { hash } from 'node:crypto';
import { RecentResults } from '../pki/recent-results.ts';
import { decodeIdentitySecret, decodeIdentityTrustSecret } from './identity-secret.ts';
import { decodeIssuerSecret } from './issuer-secret.ts';
import { decodeKeyPair } from './key-pair-secret.ts';
import type { SecretData } from './layout.ts';
import type {
  Decoded,
  IdentityState,
  IdentityTrustState,
  IssuerState,
  KeyPairMaterial,
} from './material.ts';

/**
 * Entries kept per kind. @default 32
 * A handful of Secrets exist (the identities, the issuer, the webhook's and frontends' key
 * pairs), so repeats of one content are near each other. Kept small on purpose: an entry
 * evicted soon dies in the young generation, while a large cache of never-repeating contents
 * (a stream of new Secrets) moves everything it holds into the old generation first. Decoded
 * material holds no native object until its private key is read (only to sign or write it
 * back; see readPrivateKeyLazily): native objects freed together in one full collection
 * once paused the webhook for over half a second.
 */
export const defaultDecoderCapacity = 32;

function fingerprint(label: string, data: SecretData): string {
  const parts = [label];
  for (const key of Object.keys(data).sort()) {
    const value = data[key];
    if (value === undefined) continue;
    parts.push(key, typeof value === 'string' ? value : Buffer.from(value).toString('base64'));
  }
  // One text hashed at once: no Hash object, which is another native handle for the collector.
  return hash('sha256', parts.join('\0'), 'base64');
}

export class SecretDecoder {
  readonly #identities: RecentResults<IdentityState>;
  readonly #trusts: RecentResults<IdentityTrustState>;
  readonly #issuers: RecentResults<IssuerState>;
  readonly #keyPairs: RecentResults<Decoded<KeyPairMaterial>>;

  constructor(capacity: number = defaultDecoderCapacity) {
    this.#identities = new RecentResults(capacity);
    this.#trusts = new RecentResults(capacity);
    this.#issuers = new RecentResults(capacity);
    this.#keyPairs = new RecentResults(capacity);
  }

  /** An identity Secret's data; `secret` names it in problems (`Secret ns/name`). */
  identity(data: SecretData, secret: string): IdentityState {
    return this.#identities.remember(fingerprint(secret, data), () =>
      decodeIdentitySecret(data, secret),
    );
  }

  /**
   * Only the trust fields of an identity Secret (ca.crt, previous-ca.crt, previous-ca-until):
   * what the history checks read of the object before an update. tls.crt and tls.key are not
   * decoded (a certificate and a private key less per review).
   */
  identityTrust(data: SecretData, secret: string): IdentityTrustState {
    return this.#trusts.remember(fingerprint(secret, data), () =>
      decodeIdentityTrustSecret(data, secret),
    );
  }

  /** The default provider's issuer Secret. */
  issuer(data: SecretData, secret: string): IssuerState {
    return this.#issuers.remember(fingerprint(secret, data), () =>
      decodeIssuerSecret(data, secret),
    );
  }

  /** tls.crt + tls.key only (webhook, frontend, cert-manager's CA). */
  keyPair(data: SecretData, secret: string): Decoded<KeyPairMaterial> {
    return this.#keyPairs.remember(fingerprint(secret, data), () => decodeKeyPair(data, secret));
  }
}
