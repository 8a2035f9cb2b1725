import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  type CertificateAuthority,
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
} from '../pki/index.ts';
import { parseTlsReport } from '../agent-api/tls-report.ts';
import { sha256Fingerprint } from '../pki/index.ts';
import { certificateSerial, loadedTlsReport } from './loaded-report.ts';
import { decodeTlsMaterial } from './tls-material.ts';

const now = new Date('2030-03-01T12:00:00Z');

async function authority(): Promise<CertificateAuthority> {
  const { certificate, keys } = await issueCa({
    commonName: 'haptic-agent-ca',
    validityDays: 30,
    now,
  });
  return { certificate, privateKey: keys.privateKey };
}

const ca = await authority();
const previousCa = await authority();
const leaf = await issueLeaf({
  role: 'agent',
  dnsName: 'haptic-agent',
  issuer: ca,
  validityDays: 10,
  now,
});
const text = (value: string): Uint8Array => Buffer.from(value);
const files = {
  'tls.crt': text(encodeCertificateChain([leaf.certificate])),
  'tls.key': text(encodePrivateKey(leaf.keys.privateKey)),
  'ca.crt': text(encodeCertificateChain([ca.certificate])),
  'previous-ca.crt': text(encodeCertificateChain([previousCa.certificate])),
  'previous-ca-until': text('2030-03-01T13:00:00Z'),
};
const snapshot = (at: Date) => ({
  dir: '/etc/haptic/agent-tls',
  revision: '..2030_03_01_12_00_00.1',
  decoding: decodeTlsMaterial(files, '/etc/haptic/agent-tls'),
  loadedAt: at,
});

describe('the loaded TLS report', () => {
  it('fingerprints as openssl does, in lower-case hex without colons', () => {
    const pem = encodeCertificateChain([ca.certificate]);
    const printed = execFileSync('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], {
      input: pem,
    })
      .toString()
      .trim();
    expect(printed.replace(/^.*=/, '').replaceAll(':', '').toLowerCase()).toBe(
      sha256Fingerprint(ca.certificate),
    );
  });

  it('reports CAs, previous CAs and deadline, leaf serial, SAN, expiry and revision', () => {
    const report = loadedTlsReport(snapshot(now), now);
    expect(report).toEqual({
      revision: '..2030_03_01_12_00_00.1',
      valid: true,
      reason: null,
      caFingerprints: [sha256Fingerprint(ca.certificate)],
      previousCaFingerprints: [sha256Fingerprint(previousCa.certificate)],
      previousCaUntil: '2030-03-01T13:00:00.000Z',
      leaf: {
        serial: certificateSerial(leaf.certificate),
        dnsNames: ['haptic-agent'],
        notAfter: leaf.certificate.notAfter.toISOString(),
      },
      loadedAt: now.toISOString(),
    });
    expect(report.leaf?.serial).toMatch(/^[0-9a-f]+$/);
    expect(parseTlsReport(report, 'tls.loaded')).toEqual({ ok: true, report });
  });

  it('drops previous trust once its deadline passed', () => {
    const later = new Date('2030-03-01T13:00:01Z');
    const report = loadedTlsReport(snapshot(now), later);
    expect(report.previousCaFingerprints).toEqual([]);
    expect(report.previousCaUntil).toBeNull();
  });

  it('reports undecodable material as invalid with its reason and no leaf', () => {
    const broken = { ...snapshot(now), decoding: decodeTlsMaterial({}, '/tls') };
    expect(loadedTlsReport(broken, now)).toMatchObject({
      valid: false,
      reason: 'MaterialMissing',
      caFingerprints: [],
      leaf: null,
    });
  });
});
