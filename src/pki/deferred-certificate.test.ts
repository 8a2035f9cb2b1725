import { describe, expect, it } from 'vitest';
import { certificateFacts, decodeCertificateFacts } from './certificate-facts.ts';
import { deferredCertificate } from './deferred-certificate.ts';
import { issueCa, issueLeaf } from './generate.ts';
import { x509 } from './x509.ts';

const now = new Date('2030-03-01T12:00:00Z');
const ca = await issueCa({ commonName: 'deferred-ca', validityDays: 30, now });
const leaf = await issueLeaf({
  role: 'agent',
  dnsName: 'agent.example.internal',
  issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
  validityDays: 30,
  now,
});
const der = new Uint8Array(leaf.certificate.rawData);

describe('DeferredCertificate', () => {
  it('keeps the DER as given and encodes it to the same PEM', () => {
    const deferred = deferredCertificate(decodeCertificateFacts(der));
    expect(new Uint8Array(deferred.rawData)).toEqual(der);
    expect(deferred.toString('pem')).toBe(leaf.certificate.toString('pem'));
  });

  it('reads every @peculiar/x509 field as an eager decoding does', async () => {
    const deferred = deferredCertificate(decodeCertificateFacts(der));
    const eager = new x509.X509Certificate(der);
    expect(deferred).toBeInstanceOf(x509.X509Certificate);
    expect(deferred.subject).toBe(eager.subject);
    expect(deferred.issuer).toBe(eager.issuer);
    expect(deferred.serialNumber).toBe(eager.serialNumber);
    expect(deferred.notAfter).toEqual(eager.notAfter);
    expect(deferred.extensions.map((extension) => extension.type)).toEqual(
      eager.extensions.map((extension) => extension.type),
    );
    expect(new Uint8Array(deferred.publicKey.rawData)).toEqual(
      new Uint8Array(eager.publicKey.rawData),
    );
    expect(await deferred.verify({ publicKey: ca.certificate.publicKey, date: now })).toBe(true);
  });

  it('does not share the caller’s buffer', () => {
    const bytes = new Uint8Array(der);
    const deferred = deferredCertificate(decodeCertificateFacts(bytes));
    bytes.fill(0);
    expect(new Uint8Array(deferred.rawData)).toEqual(der);
    expect(deferred.subject).toBe(leaf.certificate.subject);
  });
});

describe('DeferredCertificate members', () => {
  it('forwards the rest of @peculiar/x509’s members to its eager view', async () => {
    const deferred = deferredCertificate(decodeCertificateFacts(der));
    const eager = new x509.X509Certificate(der);
    // Fields @peculiar's constructors set on each object (protected in its types).
    expect(Reflect.get(deferred, 'tag')).toBe('CERTIFICATE');
    expect(deferred.toString('hex')).toBe(eager.toString('hex'));
    expect(deferred.equal(eager)).toBe(true);
    expect(eager.equal(deferred)).toBe(true);
    expect(Reflect.get(deferred, 'asn')).toEqual(Reflect.get(eager, 'asn'));
    expect(deferred.toString('asn')).toBe(eager.toString('asn'));
    expect(await deferred.getThumbprint()).toEqual(await eager.getThumbprint());
    expect(await deferred.isSelfSigned()).toBe(false);
  });

  it('keeps the facts it was made with, which certificateFacts returns', () => {
    const facts = decodeCertificateFacts(der);
    expect(certificateFacts(deferredCertificate(facts))).toBe(facts);
  });
});
