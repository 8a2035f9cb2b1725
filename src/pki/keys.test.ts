import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { errorCodes } from '../errors.ts';
import { issueCa, issueLeaf } from './generate.ts';
import {
  decodePrivateKey,
  encodePrivateKey,
  generateKeyPair,
  keyMatchesCertificate,
  publicKeysEqual,
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
});

describe('keyMatchesCertificate', () => {
  it('is false for a key that belongs to another certificate', async () => {
    const one = await issueCa({ commonName: 'one', validityDays: 1, now });
    const other = await issueCa({ commonName: 'other', validityDays: 1, now });
    expect(keyMatchesCertificate(one.keys.privateKey, one.certificate)).toBe(true);
    expect(keyMatchesCertificate(other.keys.privateKey, one.certificate)).toBe(false);
    expect(publicKeysEqual(one.certificate.publicKey, other.certificate)).toBe(false);
  });
});
