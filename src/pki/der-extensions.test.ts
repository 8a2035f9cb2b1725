/**
 * The fields of a decoded certificate (the DER walk of der-certificate.ts and
 * der-extensions.ts) against @peculiar/x509's full ASN.1 decoding of the same certificates,
 * made by the real openssl with every extension form the chain checks read; and malformed
 * DER refused.
 */
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Certificate } from './certificate.ts';
import { readDerCertificate } from './der-certificate.ts';
import { MalformedDer } from './der-reader.ts';
import { keyDetails } from './key-details.ts';
import { generateKeyPair } from './keys.ts';
import { peculiarX509 } from './peculiar-loader.ts';
import { verifySignature } from './signature-check.ts';

const x509 = peculiarX509();

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'haptic-der-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function openssl(args: readonly string[]): void {
  const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${result.stderr}`);
}

/** A self-signed DER certificate with exactly these `-addext` extensions. */
function selfSigned(
  name: string,
  extensions: readonly string[],
  key = ['EC', 'ec_paramgen_curve:P-256'],
  digest = ['-sha256'],
): Uint8Array {
  const [algorithm = 'EC', option = ''] = key;
  openssl([
    'genpkey',
    '-algorithm',
    algorithm,
    ...(option === '' ? [] : ['-pkeyopt', option]),
    '-out',
    `${name}.key`,
  ]);
  const config = join(dir, `${name}.cnf`);
  // An empty x509_extensions section: only the -addext extensions (none: a version 1 certificate).
  writeFileSync(config, '[req]\ndistinguished_name=dn\nx509_extensions=ext\n[dn]\n[ext]\n');
  openssl([
    ...['req', '-x509', '-config', config, '-key', `${name}.key`, ...digest, '-days', '3'],
    ...['-subj', `/O=Example, Inc./CN=${name}`, '-outform', 'DER', '-out', `${name}.der`],
    ...extensions.flatMap((extension) => ['-addext', extension]),
  ]);
  return new Uint8Array(readFileSync(join(dir, `${name}.der`)));
}

const cases: readonly (readonly [string, () => Uint8Array])[] = [
  ['a certificate without extensions', () => selfSigned('bare', [])],
  [
    'a CA with pathlen 0 and keyCertSign, cRLSign',
    () =>
      selfSigned('ca', [
        'basicConstraints=critical,CA:TRUE,pathlen:0',
        'keyUsage=critical,keyCertSign,cRLSign',
      ]),
  ],
  [
    'a leaf with every key usage bit, both purposes and mixed subjectAltName entries',
    () =>
      selfSigned('leaf', [
        'basicConstraints=CA:FALSE',
        'keyUsage=digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment,keyAgreement,encipherOnly,decipherOnly',
        'extendedKeyUsage=serverAuth,clientAuth,1.3.6.1.4.1.99999.1',
        'subjectAltName=DNS:Agent.Example.com,IP:10.0.0.1,email:a@example.com,DNS:*.example.org',
      ]),
  ],
  [
    'an RSA-PSS certificate with SHA-384',
    () =>
      selfSigned(
        'pss',
        ['keyUsage=digitalSignature'],
        ['RSA-PSS', 'rsa_keygen_bits:2048'],
        ['-sha384', '-sigopt', 'rsa_padding_mode:pss'],
      ),
  ],
  [
    'an RSA certificate with SHA-256',
    () => selfSigned('rsa', ['keyUsage=digitalSignature'], ['RSA', 'rsa_keygen_bits:2048']),
  ],
  [
    'an Ed25519 certificate',
    () => selfSigned('ed', ['basicConstraints=CA:TRUE'], ['ED25519', ''], []),
  ],
];

describe('certificate fields from the DER walk', () => {
  it.each(cases)('equal @peculiar/x509 decoding for %s', (_, make) => {
    const der = make();
    const peculiar = new x509.X509Certificate(der);
    const facts = Certificate.fromDer(der);
    const basic = peculiar.getExtension(x509.BasicConstraintsExtension);
    const san = peculiar.getExtension(x509.SubjectAlternativeNameExtension);
    expect(facts).toMatchObject({
      subject: peculiar.subject,
      issuer: peculiar.issuer,
      notBefore: peculiar.notBefore,
      notAfter: peculiar.notAfter,
      ca: basic?.ca ?? false,
      pathLength: basic?.pathLength,
      keyUsage: peculiar.getExtension(x509.KeyUsagesExtension)?.usages,
      extendedKeyUsages: peculiar.getExtension(x509.ExtendedKeyUsageExtension)?.usages.map(String),
      dnsNames: (san?.names.items ?? [])
        .filter((name) => name.type === 'dns')
        .map((name) => name.value),
    });
  });

  it('reads the signature algorithm and the hash of RSA-PSS parameters', () => {
    const pss = readDerCertificate(cases[3]?.[1]() ?? new Uint8Array());
    expect(pss).toMatchObject({
      signatureAlgorithm: '1.2.840.113549.1.1.10',
      pssHash: '2.16.840.1.101.3.4.2.2',
    });
    const ec = readDerCertificate(cases[0]?.[1]() ?? new Uint8Array());
    expect(ec).toMatchObject({ signatureAlgorithm: '1.2.840.10045.4.3.2', pssHash: undefined });
  });
});

/** Whether the self-signed `der`'s own key verifies its signature without a KeyObject. */
function selfVerified(der: Uint8Array): boolean {
  const certificate = Certificate.fromDer(der);
  return verifySignature(certificate.signed, certificate.spki, certificate.spkiAlgorithm);
}

/** `der` with the byte at `index` changed. */
function flipped(der: Uint8Array, index: number): Uint8Array {
  const copy = Uint8Array.from(der);
  copy[index] = (copy[index] ?? 0) ^ 0x01;
  return copy;
}

describe('signature checks over the signed bytes', () => {
  it.each(cases)('read the public key of %s as Node exports it', (_, make) => {
    const der = make();
    const certificate = Certificate.fromDer(der);
    expect(Buffer.from(certificate.spki)).toEqual(
      new X509Certificate(der).publicKey.export({ type: 'spki', format: 'der' }),
    );
  });

  it.each(cases)('verify the self-signature of %s as OpenSSL does', (_, make) => {
    const der = make();
    const native = new X509Certificate(der);
    expect(native.verify(native.publicKey)).toBe(true);
    expect(selfVerified(der)).toBe(true);
  });

  it('refuse a changed signature and a changed signed field', () => {
    const der = cases[0]?.[1]() ?? new Uint8Array();
    const facts = readDerCertificate(der);
    // The last byte of the signature, then a byte inside the subject's common name.
    expect(selfVerified(flipped(der, der.length - 1))).toBe(false);
    const name = Buffer.from(der).indexOf('bare');
    expect(name).toBeGreaterThan(0);
    expect(name).toBeLessThan(facts.tbs.byteLength);
    expect(selfVerified(flipped(der, name))).toBe(false);
  });

  it("refuse another certificate's key and a key of another family", () => {
    const ec = Certificate.fromDer(cases[1]?.[1]() ?? new Uint8Array());
    const other = Certificate.fromDer(cases[0]?.[1]() ?? new Uint8Array());
    const rsa = Certificate.fromDer(cases[4]?.[1]() ?? new Uint8Array());
    expect(verifySignature(ec.signed, other.spki, other.spkiAlgorithm)).toBe(false);
    expect(verifySignature(ec.signed, rsa.spki, rsa.spkiAlgorithm)).toBe(false);
    // The EC key's bytes passed as if they were an RSA key: refused before OpenSSL reads them.
    expect(verifySignature(ec.signed, ec.spki, rsa.spkiAlgorithm)).toBe(false);
    // Bytes that are no key at all.
    expect(verifySignature(ec.signed, Uint8Array.from([0x30, 0x00]), ec.spkiAlgorithm)).toBe(false);
  });

  it('refuse a certificate whose outer signature algorithm differs from the signed one', () => {
    const der = cases[0]?.[1]() ?? new Uint8Array();
    const facts = readDerCertificate(der);
    // ecdsa-with-SHA256 (…04 03 02) after the TBSCertificate becomes ecdsa-with-SHA384 (…04 03 03).
    const sha256 = Buffer.from([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]);
    const outer = Buffer.from(der).indexOf(sha256, facts.tbs.byteLength);
    expect(outer).toBeGreaterThan(0);
    const changed = flipped(der, outer + sha256.length - 1);
    expect(readDerCertificate(changed).signatureAlgorithmsAgree).toBe(false);
    expect(selfVerified(changed)).toBe(false);
  });
});

describe('key details read natively on demand', () => {
  it('give the key type and curve or size, and whether the certificate issued itself', () => {
    const ec = Certificate.fromDer(cases[1]?.[1]() ?? new Uint8Array());
    expect(keyDetails(ec)).toEqual({
      publicKey: { asymmetricKeyType: 'ec', asymmetricKeyDetails: { namedCurve: 'prime256v1' } },
      selfIssued: true,
    });
    const rsa = Certificate.fromDer(cases[4]?.[1]() ?? new Uint8Array());
    expect(keyDetails(rsa).publicKey).toMatchObject({
      asymmetricKeyType: 'rsa',
      asymmetricKeyDetails: { modulusLength: 2048 },
    });
  });

  it('give no key type for a key OpenSSL cannot read', () => {
    const der = cases[0]?.[1]() ?? new Uint8Array();
    const { spki } = readDerCertificate(der);
    // The uncompressed point's 0x04 prefix, the BIT STRING's first byte after its unused-bits
    // byte, becomes 0x05: no point encoding.
    const point = spki.byteOffset + spki.byteLength - 65;
    expect(der[point]).toBe(0x04);
    const broken = Uint8Array.from(der);
    broken[point] = 0x05;
    expect(keyDetails(Certificate.fromDer(broken)).publicKey).toEqual({});
    expect(selfVerified(broken)).toBe(false);
  });
});

describe('readDerCertificate on malformed DER', () => {
  const good = (): Uint8Array => selfSigned('good', ['keyUsage=digitalSignature']);

  it.each([
    ['empty input', () => new Uint8Array()],
    ['a truncated certificate', () => good().subarray(0, 200)],
    [
      'a length beyond the input',
      () => Uint8Array.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x00]),
    ],
    ['an indefinite length', () => Uint8Array.from([0x30, 0x80, 0x00, 0x00])],
    ['something other than a SEQUENCE', () => Uint8Array.from([0x04, 0x01, 0x00])],
    [
      'a signature with unused bits',
      () => {
        const der = good();
        const { signature } = readDerCertificate(der);
        const copy = Uint8Array.from(der);
        copy[der.length - signature.byteLength - 1] = 1;
        return copy;
      },
    ],
  ])('throw for %s', (_, make) => {
    expect(() => readDerCertificate(make())).toThrow(/malformed DER/);
  });
});

describe('readDerCertificate on extensions OpenSSL would not honour', () => {
  async function issued(extensions: readonly unknown[]): Promise<Uint8Array> {
    const now = Date.now();
    const certificate = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '01',
      name: 'CN=hostile',
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + 86_400_000),
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      keys: await generateKeyPair(),
      extensions: extensions as never,
    });
    return new Uint8Array(certificate.rawData);
  }

  it('reads no named usage from key usage bits past the ninth (bit 37 is not keyCertSign)', async () => {
    // Extension { keyUsage, OCTET STRING { BIT STRING 00 00 00 00 04 } }: only bit 37 set.
    const raw = Uint8Array.from([
      0x30, 0x0f, 0x06, 0x03, 0x55, 0x1d, 0x0f, 0x04, 0x08, 0x03, 0x06, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x04,
    ]);
    const der = await issued([new x509.KeyUsagesExtension(raw)]);
    expect(readDerCertificate(der).keyUsage).toBe(0);
  });

  it('throws for an extension that appears twice', async () => {
    const der = await issued([
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign),
    ]);
    expect(() => readDerCertificate(der)).toThrow(
      /malformed DER: extension 2\.5\.29\.15 appears twice/,
    );
  });
});

/** True when openssl verify, given the self-signed `der` as its own trust anchor, refuses it for an unhandled critical extension. */
function opensslRefusesCritical(name: string, der: Uint8Array): boolean {
  writeFileSync(join(dir, `${name}-verify.der`), der);
  openssl(['x509', '-inform', 'DER', '-in', `${name}-verify.der`, '-out', `${name}-verify.pem`]);
  const result = spawnSync(
    'openssl',
    ['verify', '-CAfile', `${name}-verify.pem`, `${name}-verify.pem`],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
  return /unhandled critical extension/.test(`${result.stdout}${result.stderr}`);
}

describe('critical extensions', () => {
  const critical: readonly (readonly [string, string])[] = [
    ['an unknown extension', '1.2.3.4=critical,DER:05:00'],
    ['subjectKeyIdentifier', 'subjectKeyIdentifier=critical,hash'],
    ['authorityKeyIdentifier', 'authorityKeyIdentifier=critical,keyid:always'],
    ['the TLS feature extension', 'tlsfeature=critical,status_request'],
    ['nameConstraints', 'nameConstraints=critical,permitted;DNS:example.com'],
    ['certificatePolicies', 'certificatePolicies=critical,1.2.3.4'],
    ['policyConstraints', 'policyConstraints=critical,requireExplicitPolicy:1'],
    ['policyMappings', 'policyMappings=critical,1.2.3.4:1.2.3.5'],
    ['inhibitAnyPolicy', 'inhibitAnyPolicy=critical,1'],
    ['cRLDistributionPoints', 'crlDistributionPoints=critical,URI:http://example.com/c.crl'],
    ['OCSP noCheck', 'noCheck=critical,ignored'],
    ['the Netscape certificate type', 'nsCertType=critical,server'],
    ['an RFC 3779 address block', 'sbgp-ipAddrBlock=critical,IPv4:10.0.0.0/8'],
    ['an RFC 3779 AS number set', 'sbgp-autonomousSysNum=critical,AS:64500'],
    ['extendedKeyUsage', 'extendedKeyUsage=critical,serverAuth'],
    ['subjectAltName', 'subjectAltName=critical,DNS:example.com'],
  ];

  it.each(critical)('are refused exactly when OpenSSL refuses them: %s', (_, extension) => {
    const name = `critical-${extension.replace(/[^a-zA-Z0-9]/g, '').slice(0, 24)}`;
    const der = selfSigned(name, [
      'basicConstraints=critical,CA:TRUE',
      'keyUsage=critical,keyCertSign,digitalSignature',
      extension,
    ]);
    const refused = opensslRefusesCritical(name, der);
    if (refused) {
      expect(() => readDerCertificate(der)).toThrow(/unhandled critical extension/);
    } else {
      expect(() => readDerCertificate(der)).not.toThrow();
    }
  });

  it('refuse an unknown critical extension, and accept it not critical', () => {
    expect(() =>
      readDerCertificate(selfSigned('unknown-critical', ['1.2.3.4=critical,DER:05:00'])),
    ).toThrow(/malformed DER: unhandled critical extension 1\.2\.3\.4/);
    expect(readDerCertificate(selfSigned('unknown-plain', ['1.2.3.4=DER:05:00'])).keyUsage).toBe(
      undefined,
    );
  });
});

describe('keyUsage padding bits', () => {
  it('must be zero: 03 02 03 06 is refused, not read as keyCertSign', () => {
    const padded = selfSigned('ku-padded', ['2.5.29.15=critical,DER:03:02:03:06']);
    expect(() => readDerCertificate(padded)).toThrow(MalformedDer);
    expect(() => readDerCertificate(padded)).toThrow(/keyUsage padding bits/);
    const clean = selfSigned('ku-clean', ['2.5.29.15=critical,DER:03:02:01:06']);
    expect(readDerCertificate(clean).keyUsage).toBe(32 | 64);
    const empty = selfSigned('ku-empty-unused', ['2.5.29.15=DER:03:01:03']);
    expect(() => readDerCertificate(empty)).toThrow(MalformedDer);
  });
});

describe('subjectAltName entries', () => {
  it('of every kind are read when well formed', () => {
    // The last one a directoryName [4] holding the Name CN=ab.
    const der = selfSigned('san-all', [
      'subjectAltName=DNS:a.example.com,IP:10.0.0.1,IP:::1,email:a@example.com,URI:https://example.com/,RID:1.2.3.4,otherName:1.2.3.4;UTF8:x',
    ]);
    expect(readDerCertificate(der).dnsNames).toEqual(['a.example.com']);
    const directory = selfSigned('san-dir', [
      '2.5.29.17=DER:30:11:a4:0f:30:0d:31:0b:30:09:06:03:55:04:03:0c:02:61:62',
    ]);
    expect(readDerCertificate(directory).dnsNames).toEqual([]);
  });

  const malformedNames: readonly (readonly [string, string])[] = [
    ['an unknown tag [9]', '30:02:89:00'],
    ['a constructed dNSName', '30:04:a2:02:04:00'],
    ['a primitive directoryName', '30:02:84:00'],
    ['a directoryName that holds no Name', '30:04:a4:02:05:00'],
    ['an iPAddress of three bytes', '30:05:87:03:01:02:03'],
    ['a registeredID that is no OID', '30:03:88:01:80'],
    ['an otherName without its value', '30:07:a0:05:06:03:2a:03:04'],
    ['a dNSName past ASCII', '30:03:82:01:ff'],
    ['an ediPartyName holding a truncated value', '30:04:a5:02:30:05'],
  ];

  it.each(malformedNames)('make the certificate malformed: %s', (what, bytes) => {
    const der = selfSigned(`san-${what.replace(/[^a-z]/g, '').slice(0, 20)}`, [
      `2.5.29.17=DER:${bytes}`,
    ]);
    expect(() => readDerCertificate(der)).toThrow(MalformedDer);
  });
});
