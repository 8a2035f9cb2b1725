/**
 * Key matches of decoded material. Material read from a Secret carries its key's public half
 * as SubjectPublicKeyInfo bytes, so a match compares bytes with the certificate's facts (cached
 * in src/pki) and never makes the private key, a native object; material made here (generated
 * keys) is compared through its CryptoKey.
 */
import {
  type CryptoKey,
  keyMatchesCertificate,
  publicKeyInfoMatchesCertificate,
  type Certificate,
} from '../pki/index.ts';

/** The key of decoded material: its CryptoKey, and its public half's SPKI when read from a Secret. */
export interface MaterialKey {
  readonly privateKey: CryptoKey;
  readonly publicKeyInfo?: Uint8Array | undefined;
}

/** True when the material's private key belongs to the certificate. */
export function keyBelongsTo(key: MaterialKey, certificate: Certificate): boolean {
  return key.publicKeyInfo === undefined
    ? keyMatchesCertificate(key.privateKey, certificate)
    : publicKeyInfoMatchesCertificate(key.publicKeyInfo, certificate);
}
