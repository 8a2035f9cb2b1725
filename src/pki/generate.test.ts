import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HapticError } from '../errors.ts';
import type { Certificate } from './certificate.ts';
import { backdateMs, crossSignCa, issueCa, issueLeaf } from './generate.ts';
import { keyMatchesCertificate } from './keys.ts';
import { encodeCertificateChain } from './parse.ts';

const dayMs = 86_400_000;
const now = new Date('2030-03-01T12:00:00.123Z');
const atNow = ['-attime', String(Math.floor(now.getTime() / 1000))];
const dir = mkdtempSync(join(tmpdir(), 'haptic-pki-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, certificates: readonly Certificate[]): string {
  const path = join(dir, name);
  writeFileSync(path, encodeCertificateChain(certificates));
  return path;
}

function openssl(...args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const ca = await issueCa({ commonName: 'haptic-agent-ca', validityDays: 365, now });
const authority = { certificate: ca.certificate, privateKey: ca.keys.privateKey };
const agent = await issueLeaf({
  role: 'agent',
  dnsName: 'agent.example.internal',
  issuer: authority,
  validityDays: 365,
  now,
});
const controller = await issueLeaf({
  role: 'controller',
  dnsName: 'controller.example.internal',
  issuer: authority,
  validityDays: 365,
  now,
});

describe('issueCa', () => {
  it('produces a CA openssl reads with the extensions of the guide', () => {
    const text = openssl('x509', '-noout', '-text', '-in', write('ca.pem', [ca.certificate]));
    expect(text).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(text).toMatch(/Key Usage: critical\s+Certificate Sign, CRL Sign/);
    expect(text).toContain('X509v3 Subject Key Identifier');
    expect(text).toContain('Subject: CN = haptic-agent-ca');
    expect(text).toContain('ASN1 OID: prime256v1');
  });

  it('back-dates notBefore five minutes and lasts the given number of days', () => {
    expect(ca.certificate.notBefore.getTime()).toBe(
      Math.floor((now.getTime() - backdateMs) / 1000) * 1000,
    );
    expect(ca.certificate.notAfter.getTime()).toBe(
      Math.floor((now.getTime() + 365 * dayMs) / 1000) * 1000,
    );
  });

  it('uses a fresh positive 128-bit serial for every certificate', () => {
    const serials = [ca, agent, controller].map((issued) => issued.certificate.serialNumber);
    expect(new Set(serials).size).toBe(3);
    for (const serial of serials) expect(serial).toMatch(/^[0-9a-f]{32}$/);
  });

  it('rejects a validity that is not a whole positive number of days', async () => {
    await expect(issueCa({ commonName: 'x', validityDays: 0, now })).rejects.toThrow(HapticError);
    await expect(issueCa({ commonName: 'x', validityDays: 1.5, now })).rejects.toThrow(
      /whole number of days/,
    );
  });
});

describe('issueLeaf', () => {
  it('gives the agent serverAuth and its DNS name, verifiable by openssl against the CA', () => {
    const leaf = write('agent.pem', [agent.certificate]);
    const text = openssl('x509', '-noout', '-text', '-in', leaf);
    expect(text).toMatch(/Extended Key Usage:\s+TLS Web Server Authentication\n/);
    expect(text).toContain('DNS:agent.example.internal');
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature\n/);
    expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toContain('X509v3 Authority Key Identifier');
    expect(text).toContain('Subject: CN = agent.example.internal');
    const caFile = write('ca-for-agent.pem', [ca.certificate]);
    expect(openssl('verify', ...atNow, '-CAfile', caFile, '-purpose', 'sslserver', leaf)).toContain(
      ': OK',
    );
  });

  it('gives the controller clientAuth and its DNS name, verifiable by openssl against the CA', () => {
    const leaf = write('controller.pem', [controller.certificate]);
    const text = openssl('x509', '-noout', '-text', '-in', leaf);
    expect(text).toMatch(/Extended Key Usage:\s+TLS Web Client Authentication\n/);
    expect(text).toContain('DNS:controller.example.internal');
    const caFile = write('ca-for-controller.pem', [ca.certificate]);
    expect(openssl('verify', ...atNow, '-CAfile', caFile, '-purpose', 'sslclient', leaf)).toContain(
      ': OK',
    );
    expect(() =>
      openssl('verify', ...atNow, '-CAfile', caFile, '-purpose', 'sslserver', leaf),
    ).toThrow();
  });

  it('pairs the leaf with its own new key', () => {
    expect(keyMatchesCertificate(agent.keys.privateKey, agent.certificate)).toBe(true);
    expect(keyMatchesCertificate(agent.keys.privateKey, controller.certificate)).toBe(false);
  });

  it('never lets a leaf outlive its issuer', async () => {
    const shortCa = await issueCa({ commonName: 'short', validityDays: 10, now });
    const leaf = await issueLeaf({
      role: 'agent',
      dnsName: 'a.example',
      issuer: { certificate: shortCa.certificate, privateKey: shortCa.keys.privateKey },
      validityDays: 365,
      now,
    });
    expect(leaf.certificate.notAfter).toEqual(shortCa.certificate.notAfter);
  });

  it('refuses to issue under an expired issuer', async () => {
    const later = new Date(now.getTime() + 400 * dayMs);
    await expect(
      issueLeaf({
        role: 'agent',
        dnsName: 'a.example',
        issuer: authority,
        validityDays: 30,
        now: later,
      }),
    ).rejects.toThrow(/renew it first/);
  });

  it('refuses an issuer key that does not belong to the issuer certificate', async () => {
    const wrongKey = { certificate: ca.certificate, privateKey: agent.keys.privateKey };
    await expect(
      issueLeaf({ role: 'agent', dnsName: 'a.example', issuer: wrongKey, validityDays: 30, now }),
    ).rejects.toThrow(/does not belong/);
  });
});

describe('crossSignCa', () => {
  it('certifies the new CA under the old one for the window given, which openssl follows', async () => {
    const next = await issueCa({ commonName: 'haptic-agent-ca-2', validityDays: 365, now });
    const until = new Date(now.getTime() + 3_600_000);
    const cross = await crossSignCa({
      certificate: next.certificate,
      issuer: authority,
      notBefore: new Date(now.getTime() - backdateMs),
      notAfter: until,
    });
    expect(cross.subject).toBe(next.certificate.subject);
    expect(cross.issuer).toBe(ca.certificate.subject);
    expect(cross.notAfter.getTime()).toBe(Math.floor(until.getTime() / 1000) * 1000);
    const text = openssl('x509', '-noout', '-text', '-in', write('cross.pem', [cross]));
    expect(text).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    const leaf = await issueLeaf({
      role: 'agent',
      dnsName: 'agent.example.internal',
      issuer: { certificate: next.certificate, privateKey: next.keys.privateKey },
      validityDays: 365,
      now,
    });
    const oldCa = write('old-ca.pem', [ca.certificate]);
    const untrusted = write('untrusted.pem', [cross]);
    const leafPath = write('new-leaf.pem', [leaf.certificate]);
    expect(
      openssl('verify', ...atNow, '-CAfile', oldCa, '-untrusted', untrusted, leafPath),
    ).toContain(': OK');
    expect(() => openssl('verify', ...atNow, '-CAfile', oldCa, leafPath)).toThrow();
  });
});
