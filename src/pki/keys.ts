/**
 * Key pairs: generation (ECDSA P-256), PKCS#8 PEM encoding and decoding, and comparison of
 * public keys. Decoding goes through Node's KeyObject so every PEM form Node's `tls` module
 * accepts (PKCS#8, SEC1 "EC PRIVATE KEY", PKCS#1 "RSA PRIVATE KEY") is read the same way.
 */
import { KeyObject, createPrivateKey, createPublicKey, type webcrypto } from 'node:crypto';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { Certificate } from './certificate.ts';

/** A Web Crypto key (Node's type; the project compiles without the DOM library). */
export type CryptoKey = webcrypto.CryptoKey;

/** A Web Crypto key pair. */
export type CryptoKeyPair = webcrypto.CryptoKeyPair;

/** Algorithm of every key the product generates: ECDSA on P-256, signing with SHA-256. */
export const keyAlgorithm = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/** Signature algorithm the product uses with its ECDSA keys. */
export const signingAlgorithm = { name: 'ECDSA', hash: 'SHA-256' } as const;

/** Generates an extractable ECDSA P-256 key pair (extractable so it can be stored in a Secret). */
export async function generateKeyPair(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']);
}

/** Encodes a private key as PKCS#8 PEM ("BEGIN PRIVATE KEY"), the form Node's `tls` reads. */
export function encodePrivateKey(privateKey: CryptoKey | KeyObject): string {
  const key = privateKey instanceof KeyObject ? privateKey : KeyObject.from(privateKey);
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** Web Crypto import parameters for a Node key, or a sentence saying why it is unsupported. */
function importAlgorithm(
  key: KeyObject,
): webcrypto.EcKeyImportParams | webcrypto.RsaHashedImportParams | webcrypto.Algorithm | string {
  switch (key.asymmetricKeyType) {
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      const namedCurve = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' }[
        curve ?? ''
      ];
      return namedCurve === undefined
        ? `the elliptic curve ${curve ?? '(unnamed)'} is not supported; use P-256, P-384 or P-521`
        : { name: 'ECDSA', namedCurve };
    }
    case 'rsa':
      return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    case 'ed25519':
      return { name: 'Ed25519' };
    default:
      return `the key type ${key.asymmetricKeyType ?? '(unknown)'} is not supported; use ECDSA P-256`;
  }
}

function unreadable(error: unknown): HapticError {
  return new HapticError(
    errorCodes.PKI_KEY_INVALID,
    `The private key is not a readable unencrypted PEM key (${describeError(error)}); supply a PKCS#8 "BEGIN PRIVATE KEY" block.`,
    { cause: error },
  );
}

function unusable(reason: string): HapticError {
  return new HapticError(errorCodes.PKI_KEY_INVALID, `The private key cannot be used: ${reason}.`);
}

/**
 * Reads a PEM private key (PKCS#8, SEC1 or PKCS#1) of any algorithm Node knows, for callers
 * that judge the algorithm themselves. Throws `PKI_KEY_INVALID` when it is no readable key.
 */
export function readPrivateKey(pem: string | Uint8Array): KeyObject {
  try {
    return createPrivateKey({
      key: typeof pem === 'string' ? pem : Buffer.from(pem),
      format: 'pem',
    });
  } catch (error) {
    throw unreadable(error);
  }
}

/**
 * Decodes a PEM private key (PKCS#8, SEC1 or PKCS#1) into a Web Crypto key pair; the public
 * half is derived from the private key when first read. Throws `PKI_KEY_INVALID` with the reason.
 */
export function decodePrivateKey(pem: string | Uint8Array): CryptoKeyPair {
  const privateKey = readPrivateKey(pem);
  const algorithm = importAlgorithm(privateKey);
  if (typeof algorithm === 'string') throw unusable(algorithm);
  let publicKey: CryptoKey | undefined;
  const privateCryptoKey = privateKey.toCryptoKey(algorithm, true, ['sign']);
  publicHalves.set(
    privateCryptoKey,
    createPublicKey(privateKey).export({ type: 'spki', format: 'der' }),
  );
  return {
    privateKey: privateCryptoKey,
    // Derived on first read: checking a Secret needs only the private half (and the
    // KeyObject read from the PEM is not kept for it: one native object less per key).
    get publicKey(): CryptoKey {
      publicKey ??= createPublicKey(KeyObject.from(privateCryptoKey)).toCryptoKey(algorithm, true, [
        'verify',
      ]);
      return publicKey;
    },
  };
}

/** A private key read from PEM: checked and its public half read now, its CryptoKey made when needed. */
export interface ReadPrivateKey {
  /** The DER SubjectPublicKeyInfo of the key's public half, as OpenSSL encodes it. */
  readonly publicKeyInfo: Uint8Array;
  /** The key, ready to sign with Web Crypto: made on first read. */
  readonly privateKey: CryptoKey;
}

/**
 * Reads a PEM private key exactly as decodePrivateKey does (the same forms, algorithms and
 * errors), but keeps only what a key match needs: the SubjectPublicKeyInfo of its public half.
 * The public half is derived from the private key OpenSSL reads from the PEM, never read from
 * the text itself: a certificate or public key block before the private key (under any label
 * OpenSSL knows) must not stand in for the key the TLS stack will use. Both KeyObjects die
 * young; the CryptoKey, two more native objects for the garbage collector to free, is made only
 * when `privateKey` is read (to sign, or to write the key back). Throws `PKI_KEY_INVALID` with
 * the reason, here or, should the key then fail to convert, when `privateKey` is read.
 */
export function readPrivateKeyLazily(pem: string | Uint8Array): ReadPrivateKey {
  // Its own copy (not a view of a pooled buffer), kept until the CryptoKey is made.
  let bytes: Uint8Array | undefined = new Uint8Array(
    typeof pem === 'string' ? Buffer.from(pem) : pem,
  );
  const read = readPrivateKey(bytes);
  const algorithm = importAlgorithm(read);
  if (typeof algorithm === 'string') throw unusable(algorithm);
  let publicKeyInfo: Uint8Array;
  try {
    publicKeyInfo = new Uint8Array(createPublicKey(read).export({ type: 'spki', format: 'der' }));
  } catch (error) {
    throw unreadable(error);
  }
  let privateKey: CryptoKey | undefined;
  return {
    publicKeyInfo,
    get privateKey(): CryptoKey {
      if (privateKey === undefined) {
        try {
          privateKey = readPrivateKey(bytes ?? new Uint8Array()).toCryptoKey(algorithm, true, [
            'sign',
          ]);
        } catch (error) {
          throw error instanceof HapticError ? error : unreadable(error);
        }
        bytes = undefined;
        publicHalves.set(privateKey, publicKeyInfo);
      }
      return privateKey;
    },
  };
}

/**
 * The SubjectPublicKeyInfo of every private key decodePrivateKey made, read while its
 * KeyObject is at hand: a key match then compares bytes and makes no KeyObject (each one is a
 * native handle the garbage collector frees in its pause).
 */
const publicHalves = new WeakMap<CryptoKey, Uint8Array>();

/** A public key in any of the forms the product holds one (a private key counts as its public half). */
export type PublicKeySource = CryptoKey | KeyObject | Certificate;

/** A made key only lives for one comparison, so it dies young (see certificate.ts). */
function toKeyObject(source: PublicKeySource): KeyObject {
  if (source instanceof Certificate) {
    return createPublicKey({ key: Buffer.from(source.spki), format: 'der', type: 'spki' });
  }
  const key = source instanceof KeyObject ? source : KeyObject.from(source);
  return key.type === 'private' ? createPublicKey(key) : key;
}

/** The DER SubjectPublicKeyInfo of a source, as OpenSSL encodes it. */
function spkiBytes(source: PublicKeySource): Uint8Array {
  if (source instanceof Certificate) return source.spki;
  const known = source instanceof KeyObject ? undefined : publicHalves.get(source);
  return known ?? toKeyObject(source).export({ type: 'spki', format: 'der' });
}

/**
 * True when both sources hold the same public key (a private CryptoKey counts as its public
 * half). Equal SubjectPublicKeyInfo bytes are the same key; different bytes may still be one
 * key encoded another way (a compressed EC point), which OpenSSL's comparison decides.
 */
export function publicKeysEqual(a: PublicKeySource, b: PublicKeySource): boolean {
  try {
    if (Buffer.from(spkiBytes(a)).equals(spkiBytes(b))) return true;
    return toKeyObject(a).equals(toKeyObject(b));
  } catch {
    return false;
  }
}

/**
 * True when the DER SubjectPublicKeyInfo `publicKeyInfo` (of a ReadPrivateKey, say) is the
 * certificate's public key: equal bytes, or, encoded another way, the same key to OpenSSL.
 */
export function publicKeyInfoMatchesCertificate(
  publicKeyInfo: Uint8Array,
  certificate: Certificate,
): boolean {
  const known = certificate.spki;
  const given = Buffer.from(
    publicKeyInfo.buffer,
    publicKeyInfo.byteOffset,
    publicKeyInfo.byteLength,
  );
  if (given.equals(known)) return true;
  try {
    const key = (spki: Uint8Array): KeyObject =>
      createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
    return key(publicKeyInfo).equals(key(known));
  } catch {
    return false;
  }
}

/** True when the private key belongs to the certificate's public key. */
export function keyMatchesCertificate(
  privateKey: CryptoKey | KeyObject,
  certificate: Certificate,
): boolean {
  return publicKeysEqual(privateKey, certificate);
}
