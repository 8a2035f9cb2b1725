/**
 * The TLS key allow-list against the real openssl and the real haproxy: every accepted kind
 * of Secret gives a PEM file `haproxy -c` loads, and every refusal that protects the shared
 * configuration is one HAProxy would indeed have failed on.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificatePem } from '../controller/routing/tls-secret.ts';

const now = new Date();
let dir: string;

function openssl(args: readonly string[]): void {
  const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${result.stderr}`);
}

const keys = {
  rsa1024: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:1024'],
  rsa2047: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2047'],
  rsa2048: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'],
  rsaPss: ['-algorithm', 'RSA-PSS', '-pkeyopt', 'rsa_keygen_bits:2048'],
  p192: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime192v1'],
  p256: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
  p384: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'],
  p521: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-521'],
  k256: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:secp256k1'],
  ed25519: ['-algorithm', 'ED25519'],
  ed448: ['-algorithm', 'ED448'],
  x25519: ['-algorithm', 'X25519'],
} as const;

interface Material {
  readonly crt: string;
  readonly key: string;
}

/** A self-signed certificate with a key of `kind`. */
function selfSigned(name: string, kind: keyof typeof keys, digest = 'sha256'): Material {
  openssl(['genpkey', ...keys[kind], '-out', `${name}.key`]);
  openssl([
    ...['req', '-x509', '-key', `${name}.key`, `-${digest}`, '-days', '3'],
    ...['-subj', `/CN=${name}.example.com`, '-out', `${name}.crt`],
  ]);
  return { crt: `${name}.crt`, key: `${name}.key` };
}

/**
 * A leaf for `name` with a key of `kind` (X25519 through -force_pubkey, as a CA could),
 * signed by `ca` with `digest`; tls.crt holds the leaf and the CA.
 */
function issued(name: string, kind: keyof typeof keys, ca: Material, digest = 'sha256'): Material {
  openssl(['genpkey', ...keys[kind], '-out', `${name}.key`]);
  openssl(['genpkey', ...keys.p256, '-out', `${name}.csr.key`]);
  openssl([
    ...['req', '-new', '-key', `${name}.csr.key`, '-subj', `/CN=${name}.example.com`],
    ...['-out', `${name}.csr`],
  ]);
  openssl(['pkey', '-in', `${name}.key`, '-pubout', '-out', `${name}.pub`]);
  openssl([
    ...['x509', '-req', '-in', `${name}.csr`, '-CA', ca.crt, '-CAkey', ca.key],
    ...['-set_serial', '7', `-${digest}`, '-days', '3', '-force_pubkey', `${name}.pub`],
    ...['-out', `${name}.leaf.crt`],
  ]);
  writeFileSync(
    join(dir, `${name}.crt`),
    readFileSync(join(dir, `${name}.leaf.crt`), 'utf8') + readFileSync(join(dir, ca.crt), 'utf8'),
  );
  return { crt: `${name}.crt`, key: `${name}.key` };
}

function secretData(material: Material): Record<string, string> {
  return {
    'tls.crt': readFileSync(join(dir, material.crt)).toString('base64'),
    'tls.key': readFileSync(join(dir, material.key)).toString('base64'),
  };
}

/** `haproxy -c` on a frontend that loads `pem` through a crt-list, as the default template does. */
function haproxyLoads(name: string, pem: string): { ok: boolean; output: string } {
  writeFileSync(join(dir, `${name}.pem`), pem);
  writeFileSync(join(dir, `${name}.list`), `${join(dir, `${name}.pem`)} ${name}.example.com\n`);
  writeFileSync(
    join(dir, `${name}.cfg`),
    [
      'defaults',
      '  mode http',
      '  timeout client 1s',
      '  timeout server 1s',
      '  timeout connect 1s',
      'frontend https',
      `  bind 127.0.0.1:8443 ssl crt-list ${join(dir, `${name}.list`)}`,
      '  default_backend none',
      'backend none',
      '',
    ].join('\n'),
  );
  const result = spawnSync('haproxy', ['-c', '-f', join(dir, `${name}.cfg`)], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin' },
  });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
}

/** The Secret's bytes as they are, leaf + chain + key: what HAProxy would get without the policy. */
function rawPem(material: Material): string {
  return (
    readFileSync(join(dir, material.crt), 'utf8') + readFileSync(join(dir, material.key), 'utf8')
  );
}

let rsaCa: Material;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tls-key-policy-'));
  rsaCa = selfSigned('rsa-ca', 'rsa2048');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('TLS Secrets HAProxy loads (HAProxy 3.0 on Debian trixie OpenSSL 3.5)', () => {
  it.each([
    ['an RSA-2048 key', () => selfSigned('rsa2048', 'rsa2048')],
    ['an RSA-PSS 2048 key', () => selfSigned('rsapss', 'rsaPss')],
    ['an ECDSA P-256 key', () => selfSigned('p256', 'p256')],
    ['an ECDSA P-384 key', () => selfSigned('p384', 'p384')],
    ['an ECDSA P-521 key', () => selfSigned('p521', 'p521')],
    ['an Ed25519 key', () => selfSigned('ed25519', 'ed25519')],
    ['an Ed448 key', () => selfSigned('ed448', 'ed448')],
    [
      'a P-256 leaf signed with SHA-256 by an RSA CA, chain included',
      () => issued('chained', 'p256', rsaCa),
    ],
    [
      'a self-signed certificate with a SHA-1 signature (not checked by OpenSSL)',
      () => selfSigned('ss-sha1', 'p256', 'sha1'),
    ],
  ])('accepts %s, and haproxy -c loads the file it gets', (_what, make) => {
    const material = make();
    const pem = certificatePem(secretData(material), 'app/tls', now);
    if (!pem.ok) throw new Error(pem.message);
    const loaded = haproxyLoads(material.crt.replace('.crt', ''), pem.pem);
    expect(loaded.output).not.toMatch(/ALERT/);
    expect(loaded.ok).toBe(true);
  });

  it.each([
    [
      'an RSA-1024 key',
      () => selfSigned('rsa1024', 'rsa1024'),
      'tls.key is an RSA key of 1024 bits',
    ],
    ['an ECDSA P-192 key', () => selfSigned('p192', 'p192'), 'tls.key is an EC key on prime192v1'],
    ['an X25519 leaf', () => issued('x25519', 'x25519', rsaCa), 'tls.key is an X25519 key'],
    [
      'a chain certificate with an RSA-1024 key',
      () => issued('weak-chain', 'p256', selfSigned('weak-ca', 'rsa1024')),
      'the key of certificate 2 of tls.crt (CN=weak-ca.example.com) is an RSA key of 1024 bits',
    ],
  ])('refuses %s, which would have failed haproxy -c for everyone', (_what, make, message) => {
    const material = make();
    const pem = certificatePem(secretData(material), 'app/tls', now);
    expect(pem.ok).toBe(false);
    expect(pem.ok ? '' : pem.message).toContain(`Secret app/tls: ${message}`);
    expect(pem.ok ? '' : pem.message).toContain('issue the certificate with an ECDSA P-256 key');
    const loaded = haproxyLoads(`raw-${material.crt.replace('.crt', '')}`, rawPem(material));
    expect(loaded.ok).toBe(false);
    expect(loaded.output).toMatch(/unable to load/);
  });

  it.each([
    [
      'an RSA key of 2047 bits',
      () => selfSigned('rsa2047', 'rsa2047'),
      'tls.key is an RSA key of 2047 bits',
    ],
    [
      'an ECDSA key on secp256k1',
      () => selfSigned('k256', 'k256'),
      'tls.key is an EC key on secp256k1',
    ],
    [
      // HAProxy 2.6 on OpenSSL 3.0 refused it; 3.0 on OpenSSL 3.5 loads it, browsers do not.
      'a leaf signed with SHA-1',
      () => issued('sha1', 'p256', rsaCa, 'sha1'),
      'the first certificate of tls.crt is signed with RSASSA-PKCS1-v1_5 with SHA-1',
    ],
  ])(
    'refuses %s by the allow-list, although this haproxy loads it (clients do not use it)',
    (_what, make, message) => {
      const material = make();
      const pem = certificatePem(secretData(material), 'app/tls', now);
      expect(pem.ok ? '' : pem.message).toContain(`Secret app/tls: ${message}`);
      expect(haproxyLoads(`raw-${material.crt.replace('.crt', '')}`, rawPem(material)).ok).toBe(
        true,
      );
    },
  );
});
