import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HapticError, errorCodes } from '../errors.ts';
import { certificateFingerprint } from './fingerprint.ts';
import { issueCa, issueLeaf } from './generate.ts';
import { encodePrivateKey } from './keys.ts';
import { decodeCertificateChain, encodeCertificateChain, maxBundleCertificates } from './parse.ts';

const now = new Date('2030-03-01T12:00:00Z');
const ca = await issueCa({ commonName: 'haptic-agent-ca', validityDays: 30, now });
const leaf = await issueLeaf({
  role: 'agent',
  dnsName: 'agent.example.internal',
  issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
  validityDays: 30,
  now,
});
const caPem = encodeCertificateChain([ca.certificate]);
const leafPem = encodeCertificateChain([leaf.certificate]);
const keyPem = encodePrivateKey(leaf.keys.privateKey);

describe('encodeCertificateChain and decodeCertificateChain', () => {
  it('round-trip a leaf followed by its intermediate, keeping the order', () => {
    const bundle = encodeCertificateChain([leaf.certificate, ca.certificate]);
    expect(bundle).toBe(leafPem + caPem);
    expect(bundle.match(/-----BEGIN CERTIFICATE-----\n/g)).toHaveLength(2);
    const decoded = decodeCertificateChain(bundle);
    expect(decoded.map(certificateFingerprint)).toEqual(
      [leaf.certificate, ca.certificate].map(certificateFingerprint),
    );
  });

  it('decode a certificate seen before (same DER, in any bundle or line ending) into the same object', () => {
    const [first] = decodeCertificateChain(caPem);
    const [, again] = decodeCertificateChain(leafPem + caPem.replaceAll('\n', '\r\n'));
    expect(again).toBe(first);
    expect(decodeCertificateChain(leafPem)[0]).not.toBe(first);
  });

  it('accept bytes, CRLF line ends and explanatory text between blocks, as openssl does', () => {
    const text = `subject=CN = agent\r\n${leafPem.replaceAll('\n', '\r\n')}issuer text\n${caPem}`;
    expect(decodeCertificateChain(new TextEncoder().encode(text))).toHaveLength(2);
  });
});

const invalidBundles: readonly (readonly [string, string | Uint8Array, RegExp])[] = [
  ['empty data', '', /contains no PEM CERTIFICATE block/],
  ['text without any PEM block', 'hello', /contains no PEM CERTIFICATE block/],
  [
    'a private key instead of a certificate',
    keyPem,
    /PEM block 1 of the certificate data is a "PRIVATE KEY" block/,
  ],
  ['a private key after the leaf', leafPem + keyPem, /PEM block 2 .* "PRIVATE KEY" block/],
  [
    'mismatched BEGIN and END labels',
    leafPem.replace('END CERTIFICATE', 'END X509 CRL'),
    /"CERTIFICATE" ending as "X509 CRL"/,
  ],
  [
    'a BEGIN line without an END line',
    leafPem + '-----BEGIN CERTIFICATE-----\nMIIB\n',
    /BEGIN line without a matching END/,
  ],
  [
    'a truncated block before a complete one',
    '-----BEGIN CERTIFICATE-----\nMIIB\n' + leafPem,
    /BEGIN line without/,
  ],
  ['characters outside base64', leafPem.replace(/\n(.)/, '\n!'), /not valid base64/],
  [
    'base64 that is not a certificate',
    '-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n',
    /not a valid X\.509 certificate/,
  ],
  ['a truncated certificate', leafPem.replace(/\n[^\n]+\n-----END/, '\n-----END'), /PEM block 1/],
  ['more data than a Secret holds', 'x'.repeat(1024 * 1024 + 1), /more than the 1048576 bytes/],
  [
    'too many certificates',
    leafPem.repeat(maxBundleCertificates + 1),
    /more than 256 certificates/,
  ],
];

describe('decodeCertificateChain rejects', () => {
  it.each(invalidBundles)('%s', (_name, input, message) => {
    let thrown: unknown;
    try {
      decodeCertificateChain(input);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HapticError);
    expect(thrown).toMatchObject({ code: errorCodes.PKI_CERTIFICATE_INVALID });
    expect(thrown instanceof Error ? thrown.message : '').toMatch(message);
    expect(thrown instanceof Error ? thrown.message : '').not.toContain(keyPem.split('\n')[1]);
  });

  it('refuses BEGIN lines without END lines, naming the first', () => {
    // Nearly 1 MiB of BEGIN lines, no END (bench/certificate-reading.ts holds the time it
    // takes under a second; a whole-block pattern took 19 s).
    const hostile = '-----BEGIN A'.repeat(Math.floor((1024 * 1024 - leafPem.length) / 12));
    expect(() => decodeCertificateChain(hostile)).toThrow(/PEM block 1 .* without a matching END/);
    expect(() => decodeCertificateChain(leafPem + hostile)).toThrow(/PEM block 2 /);
  });

  it('names the data it was given in the message', () => {
    expect(() =>
      decodeCertificateChain('', 'tls.crt of Secret haptic/haptic-agent-identity'),
    ).toThrow('tls.crt of Secret haptic/haptic-agent-identity contains no PEM CERTIFICATE block.');
  });
});

describe('certificateFingerprint', () => {
  it('prints the SHA-256 fingerprint as openssl does', () => {
    const printed = execFileSync('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], {
      input: leafPem,
      encoding: 'utf8',
    });
    expect(printed.trim()).toBe(`sha256 Fingerprint=${certificateFingerprint(leaf.certificate)}`);
  });
});
