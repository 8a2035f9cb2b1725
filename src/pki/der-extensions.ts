/**
 * The few fields of a DER certificate that Node's native X509Certificate does not expose and
 * chain verification reads: the keyUsage bits, basicConstraints (CA flag, path length), the
 * dNSName entries of the subjectAltName, the extended key usage OIDs, the signature
 * algorithm, and the bytes a signature check needs (the signed TBSCertificate, the signature
 * value, the SubjectPublicKeyInfo and its algorithm). A strict, bounded TLV walk over input OpenSSL has already accepted; anything
 * malformed throws, so a certificate whose facts decode has every one of these readable.
 */

interface Tlv {
  readonly tag: number;
  /** Where the TLV begins (its tag). */
  readonly offset: number;
  /** Start and end (exclusive) of the contents. */
  readonly start: number;
  readonly end: number;
}

const tags = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  sequence: 0x30,
  explicit0: 0xa0,
  explicitExtensions: 0xa3,
  dnsName: 0x82,
} as const;

const oids = {
  rsaPss: '1.2.840.113549.1.1.10',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  extendedKeyUsage: '2.5.29.37',
} as const;

function malformed(what: string): Error {
  return new Error(`malformed DER: ${what}`);
}

/** The TLV at `offset`, its contents within `limit`. Only definite lengths of up to 4 bytes. */
function readTlv(der: Uint8Array, offset: number, limit: number): Tlv {
  if (offset + 2 > limit) throw malformed('truncated header');
  const tag = der[offset] ?? 0;
  if ((tag & 0x1f) === 0x1f) throw malformed('multi-byte tag');
  let length = der[offset + 1] ?? 0;
  let start = offset + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4 || start + bytes > limit) throw malformed('length');
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + (der[start + i] ?? 0);
    start += bytes;
  }
  const end = start + length;
  if (end > limit) throw malformed('length beyond its container');
  return { tag, offset, start, end };
}

/** The TLVs inside a constructed value. */
function children(der: Uint8Array, parent: Tlv): Tlv[] {
  const found: Tlv[] = [];
  for (let offset = parent.start; offset < parent.end;) {
    const child = readTlv(der, offset, parent.end);
    found.push(child);
    offset = child.end;
  }
  return found;
}

function expectTag(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (tlv === undefined || tlv.tag !== tag) throw malformed(what);
  return tlv;
}

/** Dotted decimal of an OBJECT IDENTIFIER's contents. */
function oidText(der: Uint8Array, tlv: Tlv): string {
  const arcs: number[] = [];
  let value = 0;
  for (let i = tlv.start; i < tlv.end; i++) {
    const byte = der[i] ?? 0;
    value = value * 128 + (byte & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) throw malformed('OID arc too large');
    if ((byte & 0x80) === 0) {
      if (arcs.length === 0) {
        const first = Math.min(2, Math.floor(value / 40));
        arcs.push(first, value - 40 * first);
      } else arcs.push(value);
      value = 0;
    }
  }
  if (arcs.length === 0 || (der[tlv.end - 1] ?? 0) & 0x80) throw malformed('OID');
  return arcs.join('.');
}

function smallInteger(der: Uint8Array, tlv: Tlv): number {
  const length = tlv.end - tlv.start;
  if (length === 0 || length > 6 || (der[tlv.start] ?? 0) & 0x80) throw malformed('integer');
  let value = 0;
  for (let i = tlv.start; i < tlv.end; i++) value = value * 256 + (der[i] ?? 0);
  return value;
}

export interface DerExtensions {
  /** keyUsage flags (bit n of the BIT STRING is 2^n: digitalSignature 1, keyCertSign 32), or undefined when absent. */
  readonly keyUsage: number | undefined;
  /** basicConstraints CA flag; false when the extension is absent. */
  readonly ca: boolean;
  readonly pathLength: number | undefined;
  /** extendedKeyUsage OIDs, or undefined when absent. */
  readonly extendedKeyUsages: readonly string[] | undefined;
  /** dNSName entries of the subjectAltName, as written. */
  readonly dnsNames: readonly string[];
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

function whole(der: Uint8Array, tlv: Tlv): Uint8Array {
  return der.subarray(tlv.offset, tlv.end);
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

function keyUsageFlags(der: Uint8Array, value: Tlv): number {
  const bits = expectTag(readTlv(der, value.start, value.end), tags.bitString, 'keyUsage');
  if (bits.end === bits.start) throw malformed('keyUsage');
  let flags = 0;
  // KeyUsage names bits 0–8. Later bits mean nothing (OpenSSL reads two bytes too); read on,
  // they would shift past 31 and wrap onto named bits (bit 37 read as keyCertSign).
  for (let i = bits.start + 1; i < Math.min(bits.end, bits.start + 3); i++) {
    const byte = der[i] ?? 0;
    for (let bit = 0; bit < 8; bit++) {
      if (byte & (0x80 >> bit)) flags |= 1 << ((i - bits.start - 1) * 8 + bit);
    }
  }
  return flags;
}

function basicConstraints(der: Uint8Array, value: Tlv): Pick<DerExtensions, 'ca' | 'pathLength'> {
  const sequence = expectTag(
    readTlv(der, value.start, value.end),
    tags.sequence,
    'basicConstraints',
  );
  let ca = false;
  let pathLength: number | undefined;
  for (const field of children(der, sequence)) {
    if (field.tag === tags.boolean) ca = field.end > field.start && der[field.start] !== 0;
    else if (field.tag === tags.integer) pathLength = smallInteger(der, field);
    else throw malformed('basicConstraints');
  }
  return { ca, pathLength };
}

function dnsNames(der: Uint8Array, value: Tlv): string[] {
  const sequence = expectTag(readTlv(der, value.start, value.end), tags.sequence, 'subjectAltName');
  return children(der, sequence)
    .filter((name) => name.tag === tags.dnsName)
    .map((name) => Buffer.from(der.subarray(name.start, name.end)).toString('latin1'));
}

function purposes(der: Uint8Array, value: Tlv): string[] {
  const sequence = expectTag(
    readTlv(der, value.start, value.end),
    tags.sequence,
    'extendedKeyUsage',
  );
  return children(der, sequence).map((oid) =>
    oidText(der, expectTag(oid, tags.oid, 'extendedKeyUsage')),
  );
}

/** RSASSA-PSS-params: the hash algorithm's OID from `[0] EXPLICIT AlgorithmIdentifier`, if any. */
function pssHash(der: Uint8Array, parameters: Tlv): string | undefined {
  const fields = children(der, expectTag(parameters, tags.sequence, 'RSA-PSS parameters'));
  const hash = fields.find((field) => field.tag === tags.explicit0);
  if (hash === undefined) return undefined;
  const identifier = expectTag(readTlv(der, hash.start, hash.end), tags.sequence, 'RSA-PSS hash');
  const [oid] = children(der, identifier);
  return oidText(der, expectTag(oid, tags.oid, 'RSA-PSS hash'));
}

/**
 * Reads the extensions, signature algorithm and signed parts of a DER certificate. Throws
 * when malformed.
 */
export function readDerExtensions(der: Uint8Array): DerExtensions {
  const certificate = expectTag(readTlv(der, 0, der.length), tags.sequence, 'Certificate');
  const [tbs, algorithm, signatureValue, ...extra] = children(der, certificate);
  if (extra.length > 0) throw malformed('Certificate has more than three fields');
  const signedPart = expectTag(tbs, tags.sequence, 'TBSCertificate');
  const outerAlgorithm = expectTag(algorithm, tags.sequence, 'signatureAlgorithm');
  const tbsFields = children(der, signedPart);
  const bits = expectTag(signatureValue, tags.bitString, 'signatureValue');
  if (bits.end === bits.start || der[bits.start] !== 0) throw malformed('signatureValue');
  // serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo after [0] version.
  const versioned = tbsFields[0]?.tag === tags.explicit0 ? 1 : 0;
  const innerAlgorithm = expectTag(tbsFields[versioned + 1], tags.sequence, 'TBS signature');
  const spki = expectTag(tbsFields[versioned + 5], tags.sequence, 'subjectPublicKeyInfo');
  const [spkiAlgorithm] = children(der, spki);
  const [spkiAlgorithmOid] = children(
    der,
    expectTag(spkiAlgorithm, tags.sequence, 'subjectPublicKeyInfo algorithm'),
  );
  const [algorithmOid, parameters] = children(der, outerAlgorithm);
  const found: {
    -readonly [K in keyof DerExtensions]: DerExtensions[K];
  } = {
    keyUsage: undefined,
    ca: false,
    pathLength: undefined,
    extendedKeyUsages: undefined,
    dnsNames: [],
    signatureAlgorithm: oidText(der, expectTag(algorithmOid, tags.oid, 'signatureAlgorithm')),
    pssHash: undefined,
    tbs: whole(der, signedPart),
    signature: der.subarray(bits.start + 1, bits.end),
    signatureAlgorithmsAgree: bytesEqual(whole(der, outerAlgorithm), whole(der, innerAlgorithm)),
    spki: whole(der, spki),
    spkiAlgorithm: oidText(
      der,
      expectTag(spkiAlgorithmOid, tags.oid, 'subjectPublicKeyInfo algorithm'),
    ),
  };
  if (found.signatureAlgorithm === oids.rsaPss && parameters !== undefined) {
    found.pssHash = pssHash(der, parameters);
  }
  const wrapper = tbsFields.find((field) => field.tag === tags.explicitExtensions);
  if (wrapper === undefined) return found;
  const list = expectTag(readTlv(der, wrapper.start, wrapper.end), tags.sequence, 'extensions');
  const seen = new Set<string>();
  for (const extension of children(der, list)) {
    const [id, ...rest] = children(der, expectTag(extension, tags.sequence, 'extension'));
    const oid = oidText(der, expectTag(id, tags.oid, 'extension id'));
    const value = expectTag(rest[rest.length - 1], tags.octetString, `extension ${oid}`);
    // RFC 5280 4.2: never more than one instance of an extension; OpenSSL marks such a
    // certificate invalid, so which instance a check reads must never matter.
    if (seen.has(oid)) throw malformed(`extension ${oid} appears twice`);
    seen.add(oid);
    if (oid === oids.keyUsage) found.keyUsage = keyUsageFlags(der, value);
    else if (oid === oids.basicConstraints) Object.assign(found, basicConstraints(der, value));
    else if (oid === oids.subjectAltName) found.dnsNames = dnsNames(der, value);
    else if (oid === oids.extendedKeyUsage) found.extendedKeyUsages = purposes(der, value);
  }
  return found;
}
