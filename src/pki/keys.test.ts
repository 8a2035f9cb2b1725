import { execFileSync } from 'node:child_process';
import { ECDH, KeyObject, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { errorCodes } from '../errors.ts';
import { issueCa, issueLeaf } from './generate.ts';
import {
  decodePrivateKey,
  encodePrivateKey,
  generateKeyPair,
  keyMatchesCertificate,
  publicKeyInfoMatchesCertificate,
  publicKeysEqual,
  readPrivateKeyLazily,
} from './keys.ts';
import { decodeCertificateChain } from './parse.ts';

const now = new Date('2030-03-01T12:00:00Z');
const dir = mkdtempSync(join(tmpdir(), 'haptic-keys-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function openssl(args: readonly string[], input?: string): string {
  return execFileSync('openssl', args, {
    encoding: 'utf8',
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function opensslFile(name: string, args: readonly string[]): string {
  const path = join(dir, name);
  openssl([...args, '-out', path]);
  return readFileSync(path, 'utf8');
}

describe('generateKeyPair and encodePrivateKey', () => {
  it('write an ECDSA P-256 key as PKCS#8 PEM that openssl reads', async () => {
    const pem = encodePrivateKey((await generateKeyPair()).privateKey);
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----\n$/);
    expect(openssl(['pkey', '-noout', '-text'], pem)).toContain('NIST CURVE: P-256');
  });

  it('round-trip through decodePrivateKey to the same key, which can still sign', async () => {
    const ca = await issueCa({ commonName: 'round-trip', validityDays: 30, now });
    const decoded = decodePrivateKey(encodePrivateKey(ca.keys.privateKey));
    expect(publicKeysEqual(decoded.publicKey, ca.keys.publicKey)).toBe(true);
    expect(publicKeysEqual(decoded.privateKey, ca.certificate)).toBe(true);
    const leaf = await issueLeaf({
      role: 'agent',
      dnsName: 'agent.example.internal',
      issuer: { certificate: ca.certificate, privateKey: decoded.privateKey },
      validityDays: 30,
      now,
    });
    expect(leaf.certificate.issuer).toBe('CN=round-trip');
  });
});

describe('decodePrivateKey', () => {
  it('reads an OpenSSL SEC1 "EC PRIVATE KEY" and matches it with an OpenSSL certificate', () => {
    const sec1 = opensslFile('sec1.key', ['ecparam', '-genkey', '-name', 'prime256v1', '-noout']);
    expect(sec1).toContain('BEGIN EC PRIVATE KEY');
    const keyPath = join(dir, 'sec1.key');
    const certificate = opensslFile('self.crt', [
      'req',
      '-x509',
      '-new',
      '-key',
      keyPath,
      '-days',
      '1',
      '-subj',
      '/CN=openssl',
    ]);
    const keys = decodePrivateKey(new TextEncoder().encode(sec1));
    expect(keyMatchesCertificate(keys.privateKey, decodeCertificateChain(certificate)[0])).toBe(
      true,
    );
  });

  it('reads an RSA key, so external identities with RSA keys can be checked', () => {
    const rsa = opensslFile('rsa.key', [
      'genpkey',
      '-algorithm',
      'RSA',
      '-pkeyopt',
      'rsa_keygen_bits:2048',
    ]);
    expect(decodePrivateKey(rsa).privateKey.algorithm.name).toBe('RSASSA-PKCS1-v1_5');
  });

  const rejected: readonly (readonly [string, () => string, RegExp])[] = [
    ['garbage', () => 'not a key', /not a readable unencrypted PEM key/],
    [
      'a certificate',
      () => '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
      /not a readable/,
    ],
    [
      'an encrypted key',
      () =>
        opensslFile('enc.key', [
          'genpkey',
          '-algorithm',
          'EC',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-aes256',
          '-pass',
          'pass:x',
        ]),
      /not a readable unencrypted PEM key/,
    ],
    [
      'a key on an unsupported curve',
      () =>
        opensslFile('k1.key', [
          'genpkey',
          '-algorithm',
          'EC',
          '-pkeyopt',
          'ec_paramgen_curve:secp256k1',
        ]),
      /elliptic curve secp256k1 is not supported/,
    ],
  ];

  it.each(rejected)('rejects %s with PKI_KEY_INVALID', (_name, pem, message) => {
    expect(() => decodePrivateKey(pem())).toThrow(message);
    expect(() => decodePrivateKey(pem())).toThrow(
      expect.objectContaining({ code: errorCodes.PKI_KEY_INVALID }),
    );
  });

  it.each(rejected)('rejects %s as readPrivateKeyLazily does, with the same message', (_, pem) => {
    const message = (read: () => unknown): string => {
      try {
        read();
      } catch (error) {
        expect(error).toMatchObject({ code: errorCodes.PKI_KEY_INVALID });
        return error instanceof Error ? error.message : '';
      }
      return 'no error';
    };
    expect(message(() => readPrivateKeyLazily(pem()))).toBe(message(() => decodePrivateKey(pem())));
  });
});

describe('readPrivateKeyLazily', () => {
  const ecPkcs8 = opensslFile('lazy-ec.key', [
    ...['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'],
  ]);
  const ecSec1 = opensslFile('lazy-sec1.key', [
    'ecparam',
    '-genkey',
    '-name',
    'prime256v1',
    '-noout',
  ]);
  const rsa = opensslFile('lazy-rsa.key', [
    ...['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'],
  ]);
  const ed25519 = opensslFile('lazy-ed.key', ['genpkey', '-algorithm', 'ED25519']);
  const keys = [
    ['a PKCS#8 P-384 key', ecPkcs8],
    ['a SEC1 P-256 key', ecSec1],
    ['an RSA key', rsa],
    ['an Ed25519 key', ed25519],
  ] as const;

  it.each(keys)(
    'reads %s: the public half as OpenSSL derives it, the key as decodePrivateKey makes it',
    async (_, pem) => {
      const read = readPrivateKeyLazily(new TextEncoder().encode(pem));
      const expected = createPublicKey(createPrivateKey(pem)).export({
        type: 'spki',
        format: 'der',
      });
      expect(Buffer.from(read.publicKeyInfo)).toEqual(expected);
      const eager = decodePrivateKey(pem).privateKey;
      const key = read.privateKey;
      expect(read.privateKey).toBe(key);
      expect(key.algorithm).toEqual(eager.algorithm);
      expect(key.usages).toEqual(['sign']);
      const signer =
        key.algorithm.name === 'ECDSA' ? { name: 'ECDSA', hash: 'SHA-256' } : key.algorithm;
      await expect(crypto.subtle.sign(signer, key, new Uint8Array(8))).resolves.toBeInstanceOf(
        ArrayBuffer,
      );
    },
  );

  it('makes no CryptoKey until the key is read', () => {
    const made = vi.spyOn(KeyObject.prototype, 'toCryptoKey');
    try {
      const read = readPrivateKeyLazily(ecSec1);
      expect(made).not.toHaveBeenCalled();
      expect(read.privateKey.type).toBe('private');
      expect(made).toHaveBeenCalledTimes(1);
    } finally {
      made.mockRestore();
    }
  });

  it('reads text that also holds a certificate or public key as decodePrivateKey does', async () => {
    const ca = await issueCa({ commonName: 'with-key', validityDays: 1, now });
    const pem = `${ca.certificate.toPem()}\n${encodePrivateKey(ca.keys.privateKey)}`;
    const read = readPrivateKeyLazily(pem);
    expect(publicKeyInfoMatchesCertificate(read.publicKeyInfo, ca.certificate)).toBe(true);
    expect(keyMatchesCertificate(read.privateKey, ca.certificate)).toBe(true);
    const publicOnly = createPublicKey(ecSec1).export({ type: 'spki', format: 'pem' }).toString();
    expect(() => readPrivateKeyLazily(publicOnly)).toThrow(/not a readable unencrypted PEM key/);
  });

  it.each(['CERTIFICATE', 'X509 CERTIFICATE', 'TRUSTED CERTIFICATE'])(
    'matches the key OpenSSL reads, not a certificate labelled %s before it',
    async (label) => {
      const victim = await issueCa({ commonName: 'victim', validityDays: 1, now });
      const body = victim.certificate
        .toPem()
        .replace(/-----(BEGIN|END) CERTIFICATE-----/g, `-----$1 ${label}-----`);
      // An unrelated key after the victim's certificate: the key the TLS stack would use.
      const pem = `${body}\n${ecSec1}`;
      expect(createPrivateKey(pem).equals(createPrivateKey(ecSec1))).toBe(true);
      const read = readPrivateKeyLazily(pem);
      expect(Buffer.from(read.publicKeyInfo)).toEqual(
        createPublicKey(ecSec1).export({ type: 'spki', format: 'der' }),
      );
      expect(publicKeyInfoMatchesCertificate(read.publicKeyInfo, victim.certificate)).toBe(false);
      expect(keyMatchesCertificate(read.privateKey, victim.certificate)).toBe(false);
    },
  );
});

describe('publicKeyInfoMatchesCertificate', () => {
  it('matches the key of the certificate, also encoded with a compressed point, and no other', async () => {
    const one = await issueCa({ commonName: 'one', validityDays: 1, now });
    const other = await issueCa({ commonName: 'other', validityDays: 1, now });
    const spki = KeyObject.from(one.keys.publicKey).export({ type: 'spki', format: 'der' });
    expect(publicKeyInfoMatchesCertificate(spki, one.certificate)).toBe(true);
    expect(publicKeyInfoMatchesCertificate(spki, other.certificate)).toBe(false);
    // SubjectPublicKeyInfo of P-256 with a 33-byte compressed point.
    const prefix = Buffer.from('3039301306072a8648ce3d020106082a8648ce3d030107032200', 'hex');
    const point = spki.subarray(spki.length - 65);
    const compressed = ECDH.convertKey(point, 'prime256v1', undefined, undefined, 'compressed');
    const encoded = Buffer.concat([prefix, Buffer.from(compressed as Buffer)]);
    expect(encoded.equals(spki)).toBe(false);
    expect(publicKeyInfoMatchesCertificate(encoded, one.certificate)).toBe(true);
    expect(publicKeyInfoMatchesCertificate(Uint8Array.from([0x30, 0x00]), one.certificate)).toBe(
      false,
    );
  });
});

describe('keyMatchesCertificate', () => {
  it('is false for a key that belongs to another certificate', async () => {
    const one = await issueCa({ commonName: 'one', validityDays: 1, now });
    const other = await issueCa({ commonName: 'other', validityDays: 1, now });
    expect(keyMatchesCertificate(one.keys.privateKey, one.certificate)).toBe(true);
    expect(keyMatchesCertificate(other.keys.privateKey, one.certificate)).toBe(false);
    expect(publicKeysEqual(one.certificate, other.certificate)).toBe(false);
    expect(publicKeysEqual(one.keys.publicKey, one.certificate)).toBe(true);
  });
});
