import { describe, expect, it } from 'vitest';
import { b64, keyPairData, makeCa, now, pem } from '../../test/unit/validation/material.ts';
import { decodeIssuerSecret } from '../secrets/issuer-secret.ts';
import { crossSignCa } from '../pki/index.ts';
import { type DecodedIssuer, checkIssuer, viewDefaultIssuer } from './issuer-rules.ts';
import { decodeKeyPair } from '../secrets/key-pair-secret.ts';
import { viewKeyPairIssuer } from './issuer-rules.ts';

const ca = await makeCa('ca-1');
const renewed = await makeCa('ca-1', { keys: ca.keys, days: 730 });
const unrelated = await makeCa('ca-x');
const next = await makeCa('ca-2');
const cross = await crossSignCa({
  certificate: next.certificate,
  issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
  notBefore: now,
  notAfter: new Date(now.getTime() + 3_600_000),
});

function issuerData(
  current: typeof ca,
  rotation?: { previous: typeof ca; until: string },
): Record<string, string> {
  const data: Record<string, string> = {
    ...keyPairData(current.certificate, current.keys),
    generation: b64(rotation ? '2' : '1'),
  };
  if (rotation !== undefined) {
    data['previous-ca.crt'] = b64(pem(rotation.previous.certificate));
    data['previous-ca-until'] = b64(rotation.until);
    data['cross-signed-ca.crt'] = b64(pem(cross));
  }
  return data;
}

function view(data: Record<string, string>): DecodedIssuer {
  return viewDefaultIssuer(decodeIssuerSecret(data, 'Secret haptic/ca'));
}

function verdicts(old: DecodedIssuer | undefined, nextIssuer: DecodedIssuer): string[] {
  return checkIssuer({ name: 'ca', label: 'haptic/ca', old, next: nextIssuer, now }).map(
    (f) => `${f.code} ${f.path}: ${f.message}`,
  );
}

describe('issuer Secret writes', () => {
  it('accepts an unchanged issuer', () => {
    expect(verdicts(view(issuerData(ca)), view(issuerData(ca)))).toEqual([]);
  });

  it('accepts a rotation that records the current CA as previous', () => {
    const rotated = view(issuerData(next, { previous: ca, until: '2030-03-01T13:00:00Z' }));
    expect(verdicts(view(issuerData(ca)), rotated)).toEqual([]);
  });

  it('accepts a renewal with the same key (cert-manager root renewal)', () => {
    const before = viewKeyPairIssuer(
      decodeKeyPair(keyPairData(ca.certificate, ca.keys), 'haptic/ca'),
    );
    const after = viewKeyPairIssuer(
      decodeKeyPair(keyPairData(renewed.certificate, ca.keys), 'haptic/ca'),
    );
    expect(verdicts(before, after)).toEqual([]);
  });

  it('rejects an unrelated CA', () => {
    expect(verdicts(view(issuerData(ca)), view(issuerData(unrelated)))).toEqual([
      'UnrelatedCaReplacement secret/ca/tls.crt: The issuer Secret haptic/ca would replace its CA CN=ca-1 with the unrelated CA CN=ca-x: the Job refuses to replace existing identities with an unrelated CA; restore the issuer Secret from its backup, or switch providers with new Secret names.',
    ]);
  });

  it('rejects a key that does not belong to the CA', () => {
    const data = {
      ...issuerData(ca),
      'tls.key': keyPairData(unrelated.certificate, unrelated.keys)['tls.key'] ?? '',
    };
    expect(verdicts(undefined, view(data))).toEqual([
      'KeyMismatch secret/ca/tls.key: tls.key of the issuer Secret haptic/ca does not belong to its CA certificate in tls.crt: restore the issuer Secret from its backup.',
    ]);
  });

  it('rejects an undecodable issuer, naming the key', () => {
    const data = { ...issuerData(ca), generation: b64('zero') };
    expect(verdicts(undefined, view(data))).toEqual([
      'SecretUnparsable secret/ca/generation: generation of Secret haptic/ca must be a positive whole number, not "zero". Restore the issuer Secret from its backup.',
    ]);
  });

  it('rejects a rotation deadline more than 24 hours ahead', () => {
    const rotated = view(issuerData(next, { previous: ca, until: '2030-03-03T12:00:00Z' }));
    expect(verdicts(view(issuerData(ca)), rotated).map((v) => v.split(' ')[0])).toEqual([
      'PreviousTrustDeadlineTooFar',
    ]);
  });
});
