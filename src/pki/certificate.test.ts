import { describe, expect, it } from 'vitest';
import { Certificate } from './certificate.ts';
import { issueCa, issueLeaf } from './generate.ts';
import { keyDetails } from './key-details.ts';
import { generateKeyPair } from './keys.ts';
import { peculiarX509 } from './peculiar-loader.ts';
import { isSignedBy } from './signature-check.ts';

const now = new Date('2030-03-01T12:00:00Z');
const ca = await issueCa({ commonName: 'certificate-ca', validityDays: 30, now });
const leaf = await issueLeaf({
  role: 'agent',
  dnsName: 'Agent.Example.internal',
  issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
  validityDays: 30,
  now,
});
const der = leaf.certificate.der;
const x509 = peculiarX509();

describe('Certificate', () => {
  it('keeps the DER as given and encodes it to the PEM @peculiar/x509 writes', () => {
    const certificate = Certificate.fromDer(der);
    expect(certificate.der).toEqual(der);
    expect(certificate.toPem()).toBe(new x509.X509Certificate(der).toString('pem'));
  });

  it('reads the fields @peculiar/x509 reads from the same DER', async () => {
    const certificate = Certificate.fromDer(der);
    const eager = new x509.X509Certificate(der);
    expect(certificate.subject).toBe(eager.subject);
    expect(certificate.issuer).toBe(eager.issuer);
    expect(certificate.serialNumber).toBe(eager.serialNumber);
    expect(certificate.notBefore).toEqual(eager.notBefore);
    expect(certificate.notAfter).toEqual(eager.notAfter);
    const san = eager.getExtension(x509.SubjectAlternativeNameExtension);
    expect(certificate.dnsNames).toEqual(san?.names.items.map((name) => name.value));
    expect(certificate.ca).toBe(false);
    expect(Certificate.fromDer(ca.certificate.der).ca).toBe(
      new x509.X509Certificate(ca.certificate.der).getExtension(x509.BasicConstraintsExtension)?.ca,
    );
    expect(certificate.spki).toEqual(new Uint8Array(eager.publicKey.rawData));
    const thumbprint = await eager.getThumbprint('SHA-256');
    expect(certificate.sha256).toBe(Buffer.from(thumbprint).toString('hex'));
    const issuer = new x509.X509Certificate(ca.certificate.der);
    expect(await eager.verify({ publicKey: issuer.publicKey, date: now })).toBe(true);
    expect(isSignedBy(certificate, ca.certificate)).toBe(true);
    expect(keyDetails(certificate).selfIssued).toBe(await eager.isSelfSigned());
  });

  it('reads a serial number whose first bit needs a sign byte as @peculiar/x509 does', async () => {
    const made = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '80ff',
      name: 'CN=serial',
      notBefore: now,
      notAfter: new Date(now.getTime() + 86_400_000),
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      keys: await generateKeyPair(),
    });
    const certificate = Certificate.fromDer(new Uint8Array(made.rawData));
    expect(certificate.serialNumber).toBe('80ff');
    expect(certificate.serialNumber).toBe(made.serialNumber);
  });

  it('does not share the caller’s buffer', () => {
    const bytes = new Uint8Array(der);
    const certificate = Certificate.fromDer(bytes);
    bytes.fill(0);
    expect(certificate.der).toEqual(der);
    expect(certificate.subject).toBe(leaf.certificate.subject);
  });
});
