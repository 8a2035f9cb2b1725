/**
 * The TLV walk under the certificate reader (der-certificate.ts): bounded and strict. Only
 * definite lengths of up to four bytes and single-byte tags; every value must lie inside its
 * container; INTEGERs, BOOLEANs and OBJECT IDENTIFIERs must be encoded as DER (and as
 * OpenSSL's decoder demands). Anything else throws `malformed DER: …`.
 */

export interface Tlv {
  readonly tag: number;
  /** Where the TLV begins (its tag). */
  readonly offset: number;
  /** Start and end (exclusive) of the contents. */
  readonly start: number;
  readonly end: number;
}

/** Universal and context tags the reader meets. */
export const tags = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  utf8String: 0x0c,
  numericString: 0x12,
  printableString: 0x13,
  t61String: 0x14,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  universalString: 0x1c,
  bmpString: 0x1e,
  sequence: 0x30,
  set: 0x31,
  explicit0: 0xa0,
  issuerUniqueId: 0x81,
  subjectUniqueId: 0x82,
  explicitExtensions: 0xa3,
  dnsName: 0x82,
} as const;

/** The error of every malformed or refused input; its message says what was wrong. */
export class MalformedDer extends Error {
  constructor(what: string) {
    super(`malformed DER: ${what}`);
    this.name = 'MalformedDer';
  }
}

export function malformed(what: string): MalformedDer {
  return new MalformedDer(what);
}

/** The TLV at `offset`, its contents within `limit`. */
export function readTlv(der: Uint8Array, offset: number, limit: number): Tlv {
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
    // DER: the shortest form (OpenSSL reads longer ones too; refusing them costs nothing).
    if (length < 0x80 || length < 256 ** (bytes - 1)) throw malformed('length not minimal');
    start += bytes;
  }
  const end = start + length;
  if (end > limit) throw malformed('length beyond its container');
  return { tag, offset, start, end };
}

/** The TLVs inside a constructed value. */
export function children(der: Uint8Array, parent: Tlv): Tlv[] {
  const found: Tlv[] = [];
  for (let offset = parent.start; offset < parent.end;) {
    const child = readTlv(der, offset, parent.end);
    found.push(child);
    offset = child.end;
  }
  return found;
}

/** Deepest nesting wellFormed walks below the value it is given. @default 32 */
const maxDepth = 32;

/**
 * Throws unless every constructed value inside `tlv` (and itself) holds whole TLVs, nested
 * no deeper than `maxDepth` (so hostile input cannot make the walk recurse without bound).
 */
export function wellFormed(der: Uint8Array, tlv: Tlv, depth = 0): void {
  if ((tlv.tag & 0x20) === 0) return;
  if (depth >= maxDepth) throw malformed('nested too deep');
  for (const child of children(der, tlv)) wellFormed(der, child, depth + 1);
}

export function expectTag(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (tlv === undefined || tlv.tag !== tag) throw malformed(what);
  return tlv;
}

/** The whole encoding of a TLV. */
export function whole(der: Uint8Array, tlv: Tlv): Uint8Array {
  return der.subarray(tlv.offset, tlv.end);
}

/** Dotted decimal of an OBJECT IDENTIFIER's contents (no padded or unterminated arc). */
export function oidText(der: Uint8Array, tlv: Tlv): string {
  const arcs: number[] = [];
  let value = 0;
  let arcStart = true;
  for (let i = tlv.start; i < tlv.end; i++) {
    const byte = der[i] ?? 0;
    if (arcStart && byte === 0x80) throw malformed('OID arc padded');
    value = value * 128 + (byte & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) throw malformed('OID arc too large');
    arcStart = (byte & 0x80) === 0;
    if (arcStart) {
      if (arcs.length === 0) {
        const first = Math.min(2, Math.floor(value / 40));
        arcs.push(first, value - 40 * first);
      } else arcs.push(value);
      value = 0;
    }
  }
  if (arcs.length === 0 || !arcStart) throw malformed('OID');
  return arcs.join('.');
}

/** Throws unless an INTEGER's contents are DER: not empty, no redundant leading byte. */
export function checkInteger(der: Uint8Array, tlv: Tlv, what: string): void {
  const length = tlv.end - tlv.start;
  if (length === 0) throw malformed(what);
  if (length > 1) {
    const first = der[tlv.start] ?? 0;
    const second = der[tlv.start + 1] ?? 0;
    if ((first === 0x00 && second < 0x80) || (first === 0xff && second >= 0x80)) {
      throw malformed(`${what} not minimal`);
    }
  }
}

/** A small non-negative INTEGER (up to six bytes). */
export function smallInteger(der: Uint8Array, tlv: Tlv, what: string): number {
  checkInteger(der, tlv, what);
  const length = tlv.end - tlv.start;
  if (length > 6 || (der[tlv.start] ?? 0) & 0x80) throw malformed(what);
  let value = 0;
  for (let i = tlv.start; i < tlv.end; i++) value = value * 256 + (der[i] ?? 0);
  return value;
}

/** A BOOLEAN's value; its contents must be one byte (any non-zero byte is TRUE, as OpenSSL reads). */
export function booleanValue(der: Uint8Array, tlv: Tlv, what: string): boolean {
  if (tlv.end - tlv.start !== 1) throw malformed(what);
  return der[tlv.start] !== 0;
}

/** The bytes of a BIT STRING with no unused bits (keys, signatures). */
export function octetAlignedBits(der: Uint8Array, tlv: Tlv, what: string): Uint8Array {
  if (tlv.end === tlv.start || der[tlv.start] !== 0) throw malformed(what);
  return der.subarray(tlv.start + 1, tlv.end);
}
