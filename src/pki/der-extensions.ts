/**
 * The extensions of a DER certificate that chain verification reads: the keyUsage bits,
 * basicConstraints (CA flag, path length), the dNSName entries of the subjectAltName and the
 * extended key usage OIDs. Every extension must be well formed (OID, optional one-byte
 * critical flag, OCTET STRING) and appear once; the four read here must decode as DER (a
 * keyUsage BIT STRING with zero padding bits, every subjectAltName entry a well-formed
 * GeneralName), or the walk throws, so which reading a check gets never depends on a
 * decoder's leniency. Other extensions are not decoded; one marked critical is refused unless
 * OpenSSL's verifier handles it (X509_supported_extension), as OpenSSL refuses it then.
 */
import {
  type Tlv,
  booleanValue,
  children,
  expectTag,
  malformed,
  oidText,
  readTlv,
  smallInteger,
  tags,
  wellFormed,
} from './der-reader.ts';
import { readName } from './der-names.ts';

const oids = {
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  extendedKeyUsage: '2.5.29.37',
} as const;

/**
 * Extensions OpenSSL 3's verifier handles, so it accepts them marked critical (its
 * X509_supported_extension): the four read here, and ones the product neither issues nor
 * checks (policies, name constraints, CRL distribution points, RFC 3779 resources...). Any
 * other extension marked critical makes OpenSSL refuse the certificate ("unhandled critical
 * extension"), so the reader refuses it too.
 */
const handledByOpenSsl: ReadonlySet<string> = new Set([
  '2.16.840.1.113730.1.1', // Netscape certificate type
  oids.keyUsage,
  oids.subjectAltName,
  oids.basicConstraints,
  '2.5.29.32', // certificatePolicies
  '2.5.29.31', // cRLDistributionPoints
  oids.extendedKeyUsage,
  '1.3.6.1.5.5.7.1.7', // sbgp-ipAddrBlock
  '1.3.6.1.5.5.7.1.8', // sbgp-autonomousSysNum
  '1.3.6.1.5.5.7.48.1.5', // OCSP noCheck
  '2.5.29.36', // policyConstraints
  '1.3.6.1.5.5.7.1.14', // proxyCertInfo
  '2.5.29.30', // nameConstraints
  '2.5.29.33', // policyMappings
  '2.5.29.54', // inhibitAnyPolicy
]);

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
}

/** What a certificate without extensions has. */
export const noExtensions: DerExtensions = {
  keyUsage: undefined,
  ca: false,
  pathLength: undefined,
  extendedKeyUsages: undefined,
  dnsNames: [],
};

/** The one value an extension's OCTET STRING holds, of tag `tag`. */
function contents(der: Uint8Array, value: Tlv, tag: number, what: string): Tlv {
  const inner = expectTag(readTlv(der, value.start, value.end), tag, what);
  if (inner.end !== value.end) throw malformed(what);
  return inner;
}

function keyUsageFlags(der: Uint8Array, value: Tlv): number {
  const bits = contents(der, value, tags.bitString, 'keyUsage');
  const unused = der[bits.start] ?? 0;
  if (bits.end === bits.start || unused > 7) throw malformed('keyUsage');
  // DER: no unused bits in an empty string, and the unused (padding) bits of the last byte are zero.
  if (
    bits.end === bits.start + 1
      ? unused !== 0
      : ((der[bits.end - 1] ?? 0) & ((1 << unused) - 1)) !== 0
  ) {
    throw malformed('keyUsage padding bits');
  }
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
  const fields = children(der, contents(der, value, tags.sequence, 'basicConstraints'));
  let next = 0;
  const flag = fields[next]?.tag === tags.boolean ? fields[next++] : undefined;
  const limit = fields[next]?.tag === tags.integer ? fields[next++] : undefined;
  if (next !== fields.length) throw malformed('basicConstraints');
  return {
    ca: flag !== undefined && booleanValue(der, flag, 'basicConstraints'),
    pathLength: limit === undefined ? undefined : smallInteger(der, limit, 'pathLenConstraint'),
  };
}

/** GeneralName tags: `[n]` primitive (0x80 + n) or constructed (0xa0 + n), as RFC 5280 defines each. */
const generalNameTags = {
  otherName: 0xa0,
  rfc822Name: 0x81,
  dNSName: tags.dnsName,
  x400Address: 0xa3,
  directoryName: 0xa4,
  ediPartyName: 0xa5,
  uniformResourceIdentifier: 0x86,
  iPAddress: 0x87,
  registeredID: 0x88,
} as const;

/** Throws unless `name` is a well-formed GeneralName (RFC 5280 4.2.1.6). */
function checkGeneralName(der: Uint8Array, name: Tlv): void {
  const what = 'subjectAltName entry';
  switch (name.tag) {
    case generalNameTags.otherName: {
      // type-id OBJECT IDENTIFIER, value [0] EXPLICIT ANY
      const [type, value, ...extra] = children(der, name);
      oidText(der, expectTag(type, tags.oid, what));
      const inner = children(der, expectTag(value, tags.explicit0, what));
      if (extra.length > 0 || inner.length !== 1 || inner[0] === undefined) throw malformed(what);
      wellFormed(der, inner[0]);
      return;
    }
    case generalNameTags.rfc822Name:
    case generalNameTags.dNSName:
    case generalNameTags.uniformResourceIdentifier:
      // IA5String: ASCII.
      for (let i = name.start; i < name.end; i++) {
        if ((der[i] ?? 0) > 0x7f) throw malformed(`${what} not IA5String`);
      }
      return;
    case generalNameTags.x400Address:
    case generalNameTags.ediPartyName:
      wellFormed(der, name);
      return;
    case generalNameTags.directoryName: {
      // Name is a CHOICE, so explicitly tagged: one Name inside.
      const [inner, ...extra] = children(der, name);
      if (extra.length > 0) throw malformed(what);
      readName(der, expectTag(inner, tags.sequence, what));
      return;
    }
    case generalNameTags.iPAddress:
      // An IPv4 or IPv6 address.
      if (name.end - name.start !== 4 && name.end - name.start !== 16) throw malformed(what);
      return;
    case generalNameTags.registeredID:
      oidText(der, name);
      return;
    default:
      throw malformed(what);
  }
}

function dnsNames(der: Uint8Array, value: Tlv): string[] {
  const sequence = contents(der, value, tags.sequence, 'subjectAltName');
  const names = children(der, sequence);
  for (const name of names) checkGeneralName(der, name);
  return names
    .filter((name) => name.tag === generalNameTags.dNSName)
    .map((name) => Buffer.from(der.subarray(name.start, name.end)).toString('latin1'));
}

function purposes(der: Uint8Array, value: Tlv): string[] {
  const sequence = contents(der, value, tags.sequence, 'extendedKeyUsage');
  return children(der, sequence).map((oid) =>
    oidText(der, expectTag(oid, tags.oid, 'extendedKeyUsage')),
  );
}

/** Reads the extensions in `wrapper` (the TBSCertificate's `[3]`). Throws when malformed. */
export function readExtensions(der: Uint8Array, wrapper: Tlv): DerExtensions {
  const list = contents(der, wrapper, tags.sequence, 'extensions');
  const found: { -readonly [K in keyof DerExtensions]: DerExtensions[K] } = { ...noExtensions };
  const seen = new Set<string>();
  for (const extension of children(der, list)) {
    const fields = children(der, expectTag(extension, tags.sequence, 'extension'));
    const [id, critical, ...rest] = fields;
    const oid = oidText(der, expectTag(id, tags.oid, 'extension id'));
    const flagged = critical?.tag === tags.boolean;
    if (flagged) booleanValue(der, critical, `extension ${oid} critical flag`);
    const value = expectTag(flagged ? rest[0] : critical, tags.octetString, `extension ${oid}`);
    if (fields.length !== (flagged ? 3 : 2)) throw malformed(`extension ${oid}`);
    // RFC 5280 4.2: never more than one instance of an extension; OpenSSL marks such a
    // certificate invalid, so which instance a check reads must never matter.
    if (seen.has(oid)) throw malformed(`extension ${oid} appears twice`);
    seen.add(oid);
    if (flagged && booleanValue(der, critical, 'critical') && !handledByOpenSsl.has(oid)) {
      throw malformed(`unhandled critical extension ${oid}`);
    }
    if (oid === oids.keyUsage) found.keyUsage = keyUsageFlags(der, value);
    else if (oid === oids.basicConstraints) Object.assign(found, basicConstraints(der, value));
    else if (oid === oids.subjectAltName) found.dnsNames = dnsNames(der, value);
    else if (oid === oids.extendedKeyUsage) found.extendedKeyUsages = purposes(der, value);
  }
  return found;
}
