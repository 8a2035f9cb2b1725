/**
 * Issuing certificates: a self-signed CA, role-specific leaves, and a cross-signature of a new
 * CA by the old one. Extensions follow the openssl commands of the agent-certificates guide.
 * Pure apart from randomness: the clock comes in as `now`. @peculiar/x509 builds and signs
 * them (loaded on first use, peculiar-loader.ts); what is issued is handed out decoded, as
 * every certificate is read (certificate.ts).
 */
import type * as Peculiar from '@peculiar/x509';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { Certificate } from './certificate.ts';
import {
  type CryptoKey,
  type CryptoKeyPair,
  generateKeyPair,
  keyMatchesCertificate,
  signingAlgorithm,
} from './keys.ts';
import { peculiarX509 } from './peculiar-loader.ts';

const minuteMs = 60_000;
const dayMs = 86_400_000;

/** How far notBefore is back-dated from `now`, to absorb clock skew between peers. */
export const backdateMs = 5 * minuteMs;

/**
 * TLS role of a leaf: the agent and the admission webhook serve (serverAuth), the controller
 * connects (clientAuth).
 */
export type LeafRole = 'agent' | 'controller' | 'webhook';

/** Extended key usage each leaf role carries, and the only one it carries. */
export const leafPurposes = {
  agent: 'serverAuth',
  controller: 'clientAuth',
  webhook: 'serverAuth',
} as const satisfies Record<LeafRole, 'serverAuth' | 'clientAuth'>;

/** A CA certificate together with the private key that signs under it. */
export interface CertificateAuthority {
  readonly certificate: Certificate;
  readonly privateKey: CryptoKey;
}

/** A freshly issued certificate and its key pair. */
export interface IssuedCertificate {
  readonly certificate: Certificate;
  readonly keys: CryptoKeyPair;
}

export interface IssueCaOptions {
  /** Subject common name of the CA, for example `haptic-agent-ca`. */
  readonly commonName: string;
  /** Validity in days, counted from `now`. */
  readonly validityDays: number;
  readonly now: Date;
  /** Key pair of the CA. @default a new ECDSA P-256 pair */
  readonly keys?: CryptoKeyPair;
}

export interface IssueLeafOptions {
  readonly role: LeafRole;
  /** DNS name of the peer: the only SAN, and the subject common name. */
  readonly dnsName: string;
  readonly issuer: CertificateAuthority;
  /** Validity in days, counted from `now`; clamped so the leaf never outlives its issuer. */
  readonly validityDays: number;
  readonly now: Date;
  /** Key pair of the leaf. @default a new ECDSA P-256 pair */
  readonly keys?: CryptoKeyPair;
}

export interface CrossSignCaOptions {
  /** The new CA, whose subject and public key are certified again. */
  readonly certificate: Certificate;
  /** The old CA, which signs. */
  readonly issuer: CertificateAuthority;
  /** Start of the cross-signature's validity. */
  readonly notBefore: Date;
  /** End of the cross-signature's validity (the trust overlap); clamped to the old CA's notAfter. */
  readonly notAfter: Date;
}

/** A random positive 128-bit serial number as 32 hex digits (never a leading zero byte). */
function randomSerial(): string {
  for (;;) {
    const hex = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex');
    if (!hex.startsWith('00')) return hex;
  }
}

function requireValidityDays(validityDays: number): void {
  if (!Number.isInteger(validityDays) || validityDays < 1) {
    throw new HapticError(
      errorCodes.PKI_ISSUE_INVALID,
      `The certificate validity must be a whole number of days of at least 1, got ${validityDays}.`,
    );
  }
}

function requireWindow(
  subject: string,
  notBefore: Date,
  notAfter: Date,
  issuer: Certificate,
): void {
  if (notAfter.getTime() <= notBefore.getTime()) {
    throw new HapticError(
      errorCodes.PKI_ISSUE_INVALID,
      `Cannot issue ${subject}: its validity would end at ${notAfter.toISOString()}, not after it starts at ` +
        `${notBefore.toISOString()}; the issuer ${issuer.subject} expires at ${issuer.notAfter.toISOString()}, renew it first.`,
    );
  }
}

function requireIssuerKey(issuer: CertificateAuthority): void {
  if (!keyMatchesCertificate(issuer.privateKey, issuer.certificate)) {
    throw new HapticError(
      errorCodes.PKI_ISSUE_INVALID,
      `The private key given for the CA ${issuer.certificate.subject} does not belong to its certificate; restore the matching key.`,
    );
  }
}

/** @peculiar/x509's view of a certificate, for its name, public key and key identifier to sign with. */
function signingView(certificate: Certificate): Peculiar.X509Certificate {
  try {
    return new (peculiarX509().X509Certificate)(certificate.der);
  } catch (error) {
    throw new HapticError(
      errorCodes.PKI_CERTIFICATE_INVALID,
      `A certificate the strict DER reader accepted cannot be decoded by @peculiar/x509 into its ASN.1 fields (${describeError(error)}); reissue it.`,
      { cause: error },
    );
  }
}

/** Key identifier of a certificate: its subjectKeyIdentifier, else one derived from its public key. */
async function keyIdentifier(certificate: Peculiar.X509Certificate): Promise<string> {
  const x509 = peculiarX509();
  const extension = certificate.getExtension(x509.SubjectKeyIdentifierExtension);
  if (extension !== null) return extension.keyId;
  return (await x509.SubjectKeyIdentifierExtension.create(certificate.publicKey)).keyId;
}

/** The certificate @peculiar/x509 made, decoded as every certificate is read. */
function issued(certificate: Peculiar.X509Certificate): Certificate {
  return Certificate.fromDer(new Uint8Array(certificate.rawData));
}

function earliest(a: Date, b: Date): Date {
  return a.getTime() <= b.getTime() ? a : b;
}

/**
 * Issues a self-signed CA: basicConstraints critical CA:TRUE, keyUsage critical
 * keyCertSign + cRLSign, subjectKeyIdentifier, subject `CN=<commonName>`.
 */
export async function issueCa(options: IssueCaOptions): Promise<IssuedCertificate> {
  requireValidityDays(options.validityDays);
  const keys = options.keys ?? (await generateKeyPair());
  const x509 = peculiarX509();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: [{ CN: [options.commonName] }],
    notBefore: new Date(options.now.getTime() - backdateMs),
    notAfter: new Date(options.now.getTime() + options.validityDays * dayMs),
    signingAlgorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificate: issued(certificate), keys };
}

/**
 * Issues an agent or webhook (serverAuth) or controller (clientAuth) leaf under `issuer`: DNS SAN
 * `dnsName`, keyUsage critical digitalSignature, basicConstraints critical CA:FALSE,
 * authority and subject key identifiers. notAfter never passes the issuer's notAfter.
 */
export async function issueLeaf(options: IssueLeafOptions): Promise<IssuedCertificate> {
  requireValidityDays(options.validityDays);
  requireIssuerKey(options.issuer);
  const issuer = options.issuer.certificate;
  const notBefore = new Date(options.now.getTime() - backdateMs);
  const notAfter = earliest(
    new Date(options.now.getTime() + options.validityDays * dayMs),
    issuer.notAfter,
  );
  requireWindow(
    `the ${options.role} certificate for ${options.dnsName}`,
    notBefore,
    notAfter,
    issuer,
  );
  const keys = options.keys ?? (await generateKeyPair());
  const x509 = peculiarX509();
  const signer = signingView(issuer);
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: [{ CN: [options.dnsName] }],
    issuer: signer.subjectName,
    notBefore,
    notAfter,
    signingAlgorithm,
    publicKey: keys.publicKey,
    signingKey: options.issuer.privateKey,
    extensions: [
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: options.dnsName }]),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage[leafPurposes[options.role]]]),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.AuthorityKeyIdentifierExtension(await keyIdentifier(signer)),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificate: issued(certificate), keys };
}

/**
 * Certifies the new CA's subject and public key with the old CA, for the window given (the
 * rotation overlap). A leaf under the new CA, sent with this certificate as its intermediate,
 * verifies against the old CA until `notAfter`.
 */
export async function crossSignCa(options: CrossSignCaOptions): Promise<Certificate> {
  requireIssuerKey(options.issuer);
  const issuer = options.issuer.certificate;
  const notAfter = earliest(options.notAfter, issuer.notAfter);
  requireWindow(
    `a cross-signature of ${options.certificate.subject}`,
    options.notBefore,
    notAfter,
    issuer,
  );
  const x509 = peculiarX509();
  const signer = signingView(issuer);
  const certified = signingView(options.certificate);
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: certified.subjectName,
    issuer: signer.subjectName,
    notBefore: options.notBefore,
    notAfter,
    signingAlgorithm,
    publicKey: certified.publicKey,
    signingKey: options.issuer.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      new x509.SubjectKeyIdentifierExtension(await keyIdentifier(certified)),
      new x509.AuthorityKeyIdentifierExtension(await keyIdentifier(signer)),
    ],
  });
  return issued(certificate);
}
