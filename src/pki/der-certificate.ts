/**
 * A DER certificate read in one strict, bounded walk: what chain verification, the validator
 * and messages read (names, validity, extensions, the signature algorithm) and the bytes a
 * signature check needs. No native object is made: each certificate OpenSSL decoded into an
 * X509Certificate was one more handle for the garbage collector to free in its pauses.
 *
 * Stricter than OpenSSL's decoder, never laxer: DER only, RFC 5280's structure and time
 * forms, the name string types OpenSSL decodes with contents it accepts, well-formed
 * algorithm parameters, no bytes after the certificate. So a certificate read here is one
 * OpenSSL reads (der-certificate.test.ts holds this over mutated certificates); a subject key
 * OpenSSL cannot use fails where it is used (signature checks, key matches), as OpenSSL's own
 * decoder leaves it to them too.
 */
import { type DerExtensions, noExtensions, readExtensions } from './der-extensions.ts';
import { readName } from './der-names.ts';
import {
  type Tlv,
  checkInteger,
  children,
  expectTag,
  malformed,
  octetAlignedBits,
  oidText,
  readTlv,
  smallInteger,
  tags,
  wellFormed,
  whole,
} from './der-reader.ts';

const rsaPss = '1.2.840.113549.1.1.10';

export interface DerCertificate extends DerExtensions {
  /** Distinguished names as Node prints them, `, ` between RDNs (`O=Example, CN=ca`). */
  readonly subject: string;
  readonly issuer: string;
  /** The serial number in lower-case hex: its INTEGER contents without the sign byte (00) a positive one may need. */
  readonly serialNumber: string;
  /** Milliseconds since the epoch. */
  readonly notBefore: number;
  readonly notAfter: number;
  /** OID of the certificate's signature algorithm. */
  readonly signatureAlgorithm: string;
  /** RSA-PSS only: OID of the hash its parameters name, undefined for the default (SHA-1). */
  readonly pssHash: string | undefined;
  /** The signed bytes: the whole DER TBSCertificate. */
  readonly tbs: Uint8Array;
  /** The signature value (the BIT STRING's bytes; it must have no unused bits). */
  readonly signature: Uint8Array;
  /** True when the TBSCertificate names the same signature AlgorithmIdentifier as the outer one (RFC 5280 4.1.1.2). */
  readonly signatureAlgorithmsAgree: boolean;
  /** The DER SubjectPublicKeyInfo. */
  readonly spki: Uint8Array;
  /** OID of the SubjectPublicKeyInfo's algorithm (1.2.840.10045.2.1 for EC, 1.2.840.113549.1.1.1 for RSA). */
  readonly spkiAlgorithm: string;
}

interface Algorithm {
  readonly oid: string;
  readonly parameters: Tlv | undefined;
  /** The whole AlgorithmIdentifier. */
  readonly encoding: Uint8Array;
}

/** AlgorithmIdentifier: an OID and, if any, NULL, an OID or a well-formed SEQUENCE. */
function readAlgorithm(der: Uint8Array, tlv: Tlv | undefined, what: string): Algorithm {
  const sequence = expectTag(tlv, tags.sequence, what);
  const [id, parameters, ...extra] = children(der, sequence);
  if (extra.length > 0) throw malformed(what);
  const oid = oidText(der, expectTag(id, tags.oid, what));
  if (parameters !== undefined) {
    if (parameters.tag === tags.null) {
      if (parameters.end !== parameters.start) throw malformed(`${what} parameters`);
    } else if (parameters.tag === tags.oid) oidText(der, parameters);
    else wellFormed(der, expectTag(parameters, tags.sequence, `${what} parameters`));
  }
  return { oid, parameters, encoding: whole(der, sequence) };
}

/** RSASSA-PSS-params: the hash algorithm's OID from `[0] EXPLICIT AlgorithmIdentifier`, if any. */
function pssHash(der: Uint8Array, parameters: Tlv | undefined): string | undefined {
  if (parameters === undefined) return undefined;
  const fields = children(der, expectTag(parameters, tags.sequence, 'RSA-PSS parameters'));
  const hash = fields.find((field) => field.tag === tags.explicit0);
  if (hash === undefined) return undefined;
  return readAlgorithm(der, readTlv(der, hash.start, hash.end), 'RSA-PSS hash').oid;
}

const timeForms: Readonly<Record<number, RegExp>> = {
  [tags.utcTime]: /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/,
  [tags.generalizedTime]: /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/,
};

/** A Time as RFC 5280 writes it (UTCTime YYMMDDHHMMSSZ, GeneralizedTime YYYYMMDDHHMMSSZ), in ms. */
function readTime(der: Uint8Array, tlv: Tlv | undefined): number {
  const form = tlv === undefined ? undefined : timeForms[tlv.tag];
  const text = tlv === undefined ? '' : Buffer.from(der.subarray(tlv.start, tlv.end)).toString();
  const [yearText, month, day, hour, minute, second] = (form?.exec(text) ?? [])
    .slice(1)
    .map(Number);
  if (yearText === undefined || month === undefined || day === undefined) {
    throw malformed('validity time');
  }
  // UTCTime years: 50–99 are 1950–1999, 00–49 are 2000–2049 (RFC 5280 4.1.2.5.1).
  const year = tlv?.tag === tags.utcTime ? yearText + (yearText < 50 ? 2000 : 1900) : yearText;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(ms);
  const exists =
    year >= 100 &&
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  if (!exists) throw malformed('validity time');
  return ms;
}

/** The TBSCertificate's version: absent (v1), or `[0] INTEGER` 1 (v2) or 2 (v3). */
function readVersion(der: Uint8Array, field: Tlv | undefined): number {
  if (field?.tag !== tags.explicit0) return 0;
  const [value, ...extra] = children(der, field);
  const version = smallInteger(der, expectTag(value, tags.integer, 'version'), 'version');
  if (extra.length > 0 || version < 1 || version > 2) throw malformed('version');
  return version;
}

/** The optional fields of a TBSCertificate, in their order. */
const optionalOrder: readonly number[] = [
  tags.issuerUniqueId,
  tags.subjectUniqueId,
  tags.explicitExtensions,
];

/** The optional fields after the subject key: unique identifiers (v2, v3) and extensions (v3). */
function readOptionalFields(
  der: Uint8Array,
  fields: readonly Tlv[],
  version: number,
): DerExtensions {
  let extensions = noExtensions;
  let after = 0;
  for (const field of fields) {
    const order = optionalOrder.indexOf(field.tag);
    if (order < after || version < 1) throw malformed('TBSCertificate field');
    after = order + 1;
    if (field.tag === tags.explicitExtensions) {
      if (version < 2) throw malformed('extensions before version 3');
      extensions = readExtensions(der, field);
    } else if (field.end === field.start || (der[field.start] ?? 0) > 7) {
      throw malformed('unique identifier');
    }
  }
  return extensions;
}

/** A minimal INTEGER's contents as hex, without a leading zero byte (there only as a sign). */
function serialHex(der: Uint8Array, integer: Tlv): string {
  const start = integer.end - integer.start > 1 && der[integer.start] === 0 ? 1 : 0;
  return Buffer.from(
    der.buffer,
    der.byteOffset + integer.start + start,
    integer.end - integer.start - start,
  ).toString('hex');
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** Reads a DER certificate. Throws `MalformedDer` for anything malformed or not allowed. */
export function readDerCertificate(der: Uint8Array): DerCertificate {
  const certificate = expectTag(readTlv(der, 0, der.length), tags.sequence, 'Certificate');
  if (certificate.end !== der.length) throw malformed('bytes after the certificate');
  const [tbs, algorithm, signatureValue, ...extra] = children(der, certificate);
  if (extra.length > 0) throw malformed('Certificate has more than three fields');
  const signedPart = expectTag(tbs, tags.sequence, 'TBSCertificate');
  const outer = readAlgorithm(der, algorithm, 'signatureAlgorithm');
  const signature = octetAlignedBits(
    der,
    expectTag(signatureValue, tags.bitString, 'signatureValue'),
    'signatureValue',
  );
  const fields = children(der, signedPart);
  const version = readVersion(der, fields[0]);
  const [serial, inner, issuer, validity, subject, spki, ...optional] = fields.slice(
    fields[0]?.tag === tags.explicit0 ? 1 : 0,
  );
  const serialNumber = expectTag(serial, tags.integer, 'serialNumber');
  checkInteger(der, serialNumber, 'serialNumber');
  const innerAlgorithm = readAlgorithm(der, inner, 'TBS signature');
  const times = children(der, expectTag(validity, tags.sequence, 'validity'));
  if (times.length !== 2) throw malformed('validity');
  const [keyAlgorithm, keyBits, ...keyExtra] = children(
    der,
    expectTag(spki, tags.sequence, 'subjectPublicKeyInfo'),
  );
  if (keyExtra.length > 0) throw malformed('subjectPublicKeyInfo');
  octetAlignedBits(der, expectTag(keyBits, tags.bitString, 'subjectPublicKey'), 'subjectPublicKey');
  return {
    ...readOptionalFields(der, optional, version),
    subject: readName(der, expectTag(subject, tags.sequence, 'subject')),
    issuer: readName(der, expectTag(issuer, tags.sequence, 'issuer')),
    serialNumber: serialHex(der, serialNumber),
    notBefore: readTime(der, times[0]),
    notAfter: readTime(der, times[1]),
    signatureAlgorithm: outer.oid,
    pssHash: outer.oid === rsaPss ? pssHash(der, outer.parameters) : undefined,
    tbs: whole(der, signedPart),
    signature,
    signatureAlgorithmsAgree: bytesEqual(outer.encoding, innerAlgorithm.encoding),
    spki: whole(der, expectTag(spki, tags.sequence, 'subjectPublicKeyInfo')),
    spkiAlgorithm: readAlgorithm(der, keyAlgorithm, 'subjectPublicKeyInfo algorithm').oid,
  };
}
