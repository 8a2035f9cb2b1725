/**
 * The keys and signatures a TLS Secret may bring, as an allow-list of what HAProxy 3.0 loads on
 * Debian trixie's OpenSSL 3.5 and clients accept (checked against the real haproxy in
 * tls-key-policy.test.ts). HAProxy refuses the whole configuration when one
 * certificate does not load, so anything outside this list is refused before it is used:
 *
 * - keys of every certificate in tls.crt and of tls.key: RSA (PKCS#1 or PSS) of 2048 to
 *   8192 bits, ECDSA on P-256, P-384 or P-521, Ed25519, Ed448. Not DSA, not X25519/X448
 *   (they cannot sign), not other curves (clients do not offer them). RSA is capped at
 *   8192 bits because every handshake on the shared HAProxy pays for the key size.
 * - signatures of every certificate not issued by itself: SHA-256, SHA-384 or SHA-512 with
 *   RSA, RSA-PSS or ECDSA, or Ed25519/Ed448 (clients refuse SHA-1 and MD5, and older HAProxy
 *   builds fail to load them; self-signed certificates' own signatures are not checked by
 *   OpenSSL, so neither are they here).
 *
 * Pure: decisions over parsed certificates and keys.
 */
import { type PublicKeyShape, keyDetails, type Certificate } from '../pki/index.ts';

/** What to use instead, for every refusal. */
const fix =
  'issue the certificate with an ECDSA P-256 key (or RSA of 2048 to 8192 bits, P-384, P-521, Ed25519) signed with SHA-256 or stronger';

const curves: Readonly<Record<string, string>> = {
  prime256v1: 'P-256',
  secp384r1: 'P-384',
  secp521r1: 'P-521',
};

export const rsaBits = { min: 2048, max: 8192 } as const;

/** The key in words: `an RSA key of 1024 bits`, `an EC key on secp256k1`, `an X25519 key`. */
export function describeKey(key: PublicKeyShape): string {
  const type = key.asymmetricKeyType ?? 'unknown';
  const details = key.asymmetricKeyDetails;
  if (type === 'rsa' || type === 'rsa-pss') {
    return `an ${type.toUpperCase()} key of ${String(details?.modulusLength ?? 0)} bits`;
  }
  if (type === 'ec') return `an EC key on ${details?.namedCurve ?? 'an unnamed curve'}`;
  return `an ${type.toUpperCase()} key`;
}

function keyAccepted(key: PublicKeyShape): boolean {
  const details = key.asymmetricKeyDetails;
  switch (key.asymmetricKeyType) {
    case 'rsa':
    case 'rsa-pss': {
      const bits = details?.modulusLength ?? 0;
      return bits >= rsaBits.min && bits <= rsaBits.max;
    }
    case 'ec':
      return details?.namedCurve !== undefined && details.namedCurve in curves;
    case 'ed25519':
    case 'ed448':
      return true;
    default:
      return false;
  }
}

/** Why HAProxy would not (or should not) load this key, or undefined. `what` names it. */
export function keyRefusal(key: PublicKeyShape, what: string): string | undefined {
  if (keyAccepted(key)) return undefined;
  return `${what} is ${describeKey(key)}, which HAProxy does not load here; ${fix}`;
}

/** Signature algorithms by OID: the name and hash messages show (Ed25519 and Ed448 hash inside). */
const signatures: Readonly<Record<string, readonly [name: string, hash: string | undefined]>> = {
  '1.2.840.113549.1.1.4': ['RSASSA-PKCS1-v1_5', 'MD5'],
  '1.2.840.113549.1.1.5': ['RSASSA-PKCS1-v1_5', 'SHA-1'],
  '1.2.840.113549.1.1.14': ['RSASSA-PKCS1-v1_5', 'SHA-224'],
  '1.2.840.113549.1.1.11': ['RSASSA-PKCS1-v1_5', 'SHA-256'],
  '1.2.840.113549.1.1.12': ['RSASSA-PKCS1-v1_5', 'SHA-384'],
  '1.2.840.113549.1.1.13': ['RSASSA-PKCS1-v1_5', 'SHA-512'],
  '1.2.840.10045.4.1': ['ECDSA', 'SHA-1'],
  '1.2.840.10045.4.3.1': ['ECDSA', 'SHA-224'],
  '1.2.840.10045.4.3.2': ['ECDSA', 'SHA-256'],
  '1.2.840.10045.4.3.3': ['ECDSA', 'SHA-384'],
  '1.2.840.10045.4.3.4': ['ECDSA', 'SHA-512'],
  '1.3.101.112': ['Ed25519', undefined],
  '1.3.101.113': ['Ed448', undefined],
};

/** Hash algorithms RSA-PSS parameters name, by OID. */
const pssHashes: Readonly<Record<string, string>> = {
  '1.3.14.3.2.26': 'SHA-1',
  '2.16.840.1.101.3.4.2.4': 'SHA-224',
  '2.16.840.1.101.3.4.2.1': 'SHA-256',
  '2.16.840.1.101.3.4.2.2': 'SHA-384',
  '2.16.840.1.101.3.4.2.3': 'SHA-512',
};

const rsaPss = '1.2.840.113549.1.1.10';
/** The hash RSA-PSS parameters default to. */
const sha1 = '1.3.14.3.2.26';
const hashes = new Set(['SHA-256', 'SHA-384', 'SHA-512']);

/** The signature algorithm in words, or undefined when it is accepted. */
function refusedSignature(certificate: Certificate): string | undefined {
  const { signatureAlgorithm: oid, pssHash = sha1 } = certificate;
  const [name, hash] =
    oid === rsaPss
      ? ['RSA-PSS', pssHashes[pssHash] ?? `the hash ${pssHash}`]
      : (signatures[oid] ?? [`an unknown algorithm (${oid})`, undefined]);
  if (name === 'Ed25519' || name === 'Ed448') return undefined;
  if (hash !== undefined && hashes.has(hash)) return undefined;
  return hash === undefined ? name : `${name} with ${hash}`;
}

/**
 * Why HAProxy would not load this chain (leaf first), or undefined. Every certificate's key
 * must be accepted; every certificate not issued by itself must carry an accepted signature.
 */
export function chainRefusal(chain: readonly Certificate[]): string | undefined {
  for (const [i, certificate] of chain.entries()) {
    const what =
      i === 0
        ? 'the first certificate of tls.crt'
        : `certificate ${String(i + 1)} of tls.crt (${certificate.subject.slice(0, 120)})`;
    const details = keyDetails(certificate);
    const key = keyRefusal(details.publicKey, `the key of ${what}`);
    if (key !== undefined) return key;
    if (details.selfIssued) continue;
    const signature = refusedSignature(certificate);
    if (signature !== undefined) {
      return `${what} is signed with ${signature}, which TLS clients refuse; ${fix}`;
    }
  }
  return undefined;
}
