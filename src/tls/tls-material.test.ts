import { describe, expect, it } from 'vitest';
import {
  type CertificateAuthority,
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
} from '../pki/index.ts';
import { decodeTlsMaterial, materialStatusAt, trustAt } from './tls-material.ts';

const now = new Date('2030-03-01T12:00:00Z');
const hour = 3_600_000;

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
const otherLeaf = await issueLeaf({
  role: 'agent',
  dnsName: 'haptic-agent',
  issuer: ca,
  validityDays: 10,
  now,
});

const text = (value: string): Uint8Array => Buffer.from(value);
const base = {
  'tls.crt': text(encodeCertificateChain([leaf.certificate])),
  'tls.key': text(encodePrivateKey(leaf.keys.privateKey)),
  'ca.crt': text(encodeCertificateChain([ca.certificate])),
};
const withPrevious = (until: string) => ({
  ...base,
  'previous-ca.crt': text(encodeCertificateChain([previousCa.certificate])),
  'previous-ca-until': text(`${until}\n`),
});

describe('decoding mounted TLS material', () => {
  it('decodes identity and trust', () => {
    const decoding = decodeTlsMaterial(base, '/tls');
    expect(decoding.ok).toBe(true);
    if (decoding.ok) {
      expect(decoding.material.chain[0].subject).toBe('CN=haptic-agent');
      expect(decoding.material.previousTrust).toBeUndefined();
    }
  });

  it.each([
    [
      'no tls.crt',
      { 'tls.key': base['tls.key'], 'ca.crt': base['ca.crt'] },
      'MaterialMissing',
      /no tls\.crt/,
    ],
    [
      'no ca.crt',
      { 'tls.crt': base['tls.crt'], 'tls.key': base['tls.key'] },
      'MaterialMissing',
      /no ca\.crt/,
    ],
    ['an empty tls.key', { ...base, 'tls.key': text('') }, 'MaterialMissing', /no tls\.key/],
    [
      'tls.crt that is not PEM',
      { ...base, 'tls.crt': text('garbage') },
      'MaterialUnparsable',
      /tls\.crt/,
    ],
    [
      'tls.key that is not a key',
      {
        ...base,
        'tls.key': text('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'),
      },
      'MaterialUnparsable',
      /tls\.key/,
    ],
    [
      'a key of another certificate (a torn update)',
      { ...base, 'tls.key': text(encodePrivateKey(otherLeaf.keys.privateKey)) },
      'KeyMismatch',
      /together/,
    ],
    [
      'previous-ca.crt without a deadline',
      { ...base, 'previous-ca.crt': base['ca.crt'] },
      'PreviousTrustIncomplete',
      /without previous-ca-until/,
    ],
    [
      'a deadline without previous-ca.crt',
      { ...base, 'previous-ca-until': text('2030-03-01T13:00:00Z') },
      'PreviousTrustIncomplete',
      /without previous-ca\.crt/,
    ],
    ['an unparsable deadline', withPrevious('tomorrow'), 'MaterialUnparsable', /RFC 3339/],
    [
      'a deadline with an offset',
      withPrevious('2030-03-01T13:00:00+01:00'),
      'MaterialUnparsable',
      /RFC 3339/,
    ],
  ])('refuses %s', (_name, files, reason, message) => {
    const decoding = decodeTlsMaterial(files, '/tls');
    expect(decoding).toMatchObject({ ok: false, reason });
    if (!decoding.ok) expect(decoding.message).toMatch(message);
  });

  it('gives equal bytes an equal digest, whatever the order', () => {
    const a = decodeTlsMaterial(base, '/tls');
    const b = decodeTlsMaterial(
      { 'ca.crt': base['ca.crt'], 'tls.key': base['tls.key'], 'tls.crt': base['tls.crt'] },
      '/tls',
    );
    expect(a.ok && b.ok && a.material.digest === b.material.digest).toBe(true);
  });
});

describe('judging material at an instant', () => {
  it('trusts the previous CA until its deadline', () => {
    const status = materialStatusAt(
      decodeTlsMaterial(withPrevious('2030-03-01T13:00:00Z'), '/tls'),
      now,
      '/tls',
    );
    expect(status.ok).toBe(true);
    if (status.ok) {
      expect(status.trust.anchors).toHaveLength(2);
      expect(status.trust.previousUntil?.toISOString()).toBe('2030-03-01T13:00:00.000Z');
    }
  });

  it('stops trusting the previous CA once its deadline passed, without a change of files', () => {
    const decoding = decodeTlsMaterial(withPrevious('2030-03-01T13:00:00Z'), '/tls');
    const status = materialStatusAt(decoding, new Date(now.getTime() + hour + 1), '/tls');
    expect(status.ok).toBe(true);
    if (status.ok) {
      expect(status.trust.anchors).toHaveLength(1);
      expect(status.trust.previousUntil).toBeUndefined();
    }
  });

  it('refuses a deadline more than 24 hours ahead', () => {
    const status = materialStatusAt(
      decodeTlsMaterial(withPrevious('2030-03-02T12:00:01Z'), '/tls'),
      now,
      '/tls',
    );
    expect(status).toMatchObject({ ok: false, reason: 'PreviousTrustDeadlineTooFar' });
  });

  it('accepts a deadline exactly 24 hours ahead', () => {
    expect(
      materialStatusAt(decodeTlsMaterial(withPrevious('2030-03-02T12:00:00Z'), '/tls'), now, '/tls')
        .ok,
    ).toBe(true);
  });

  it('refuses an expired own certificate, naming its expiry', () => {
    const status = materialStatusAt(
      decodeTlsMaterial(base, '/tls'),
      new Date(now.getTime() + 11 * 24 * hour),
      '/tls',
    );
    expect(status).toMatchObject({ ok: false, reason: 'IdentityExpired' });
  });

  it('refuses an own certificate that is not valid yet', () => {
    const status = materialStatusAt(
      decodeTlsMaterial(base, '/tls'),
      new Date(now.getTime() - hour),
      '/tls',
    );
    expect(status).toMatchObject({ ok: false, reason: 'IdentityNotYetValid' });
  });

  it('lets a TLS context keep ca.crt alone while the deadline is too far', () => {
    const decoding = decodeTlsMaterial(withPrevious('2030-03-05T00:00:00Z'), '/tls');
    if (!decoding.ok) throw new Error(decoding.message);
    expect(trustAt(decoding.material, now).anchors).toHaveLength(1);
  });
});
