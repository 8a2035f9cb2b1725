/**
 * Distinguished names read from DER, and printed as Node's X509Certificate prints them
 * (OpenSSL's X509_NAME_print_ex with RFC 2253 and control-character escapes, values converted
 * to UTF-8, short attribute names), with `, ` between relative distinguished names and ` + `
 * between the attributes of one. Strict: only the string types OpenSSL decodes in a name, each
 * with contents OpenSSL accepts (valid UTF-8 without surrogates, whole BMP and universal
 * characters); anything else throws, so a name read here is one OpenSSL reads too.
 */
import { isUtf8 } from 'node:buffer';
import { attributeName } from './der-name-attributes.ts';
import { type Tlv, children, expectTag, malformed, oidText, tags } from './der-reader.ts';

/** The characters of a string value, or undefined when the type is not allowed in a name. */
function decodeValue(der: Uint8Array, value: Tlv): string | undefined {
  const bytes = der.subarray(value.start, value.end);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (value.tag) {
    case tags.utf8String:
      if (!isUtf8(bytes)) throw malformed('UTF8String');
      return view.toString('utf8');
    case tags.printableString:
    case tags.numericString:
    case tags.t61String:
    case tags.ia5String:
      // One byte a character, read as Latin-1 whatever the type promises, as OpenSSL does.
      return view.toString('latin1');
    case tags.bmpString:
      return wideCharacters(bytes, 2, 'BMPString');
    case tags.universalString:
      return wideCharacters(bytes, 4, 'UniversalString');
    default:
      return undefined;
  }
}

/** Big-endian characters of `width` bytes; surrogates and values past U+10FFFF are refused. */
function wideCharacters(bytes: Uint8Array, width: 2 | 4, what: string): string {
  if (bytes.byteLength % width !== 0) throw malformed(what);
  let text = '';
  for (let i = 0; i < bytes.byteLength; i += width) {
    let point = 0;
    for (let j = 0; j < width; j++) point = point * 256 + (bytes[i + j] ?? 0);
    if (point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) throw malformed(what);
    text += String.fromCodePoint(point);
  }
  return text;
}

/** Characters RFC 2253 escapes with a backslash wherever they stand. */
const specials = new Set(['"', '+', ',', ';', '<', '>', '\\']);

/**
 * A value as OpenSSL prints it: specials and a leading `#` (unless it is the only character)
 * or a leading or trailing space escaped with a backslash, control characters as `\XX`.
 * Characters past ASCII are printed as they are.
 */
function escapeValue(text: string): string {
  let out = '';
  const last = text.length - 1;
  for (let i = 0; i <= last; i++) {
    const char = text.charAt(i);
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) {
      out += `\\${code.toString(16).toUpperCase().padStart(2, '0')}`;
    } else if (
      specials.has(char) ||
      (char === ' ' && (i === 0 || i === last)) ||
      (char === '#' && i === 0 && i !== last)
    ) {
      out += `\\${char}`;
    } else {
      out += char;
    }
  }
  return out;
}

/** `type=value` of one AttributeTypeAndValue. */
function attributeText(der: Uint8Array, attribute: Tlv): string {
  const fields = children(der, expectTag(attribute, tags.sequence, 'name attribute'));
  const [type, value, ...extra] = fields;
  if (value === undefined || extra.length > 0) throw malformed('name attribute');
  const oid = oidText(der, expectTag(type, tags.oid, 'name attribute type'));
  const text = decodeValue(der, value);
  if (text === undefined) throw malformed(`name attribute ${oid} of tag ${String(value.tag)}`);
  return `${attributeName(oid)}=${escapeValue(text)}`;
}

/**
 * The Name at `name` (a SEQUENCE of SETs of attributes) as text: `O=Example, CN=ca`, in
 * certificate order. Throws when malformed.
 */
export function readName(der: Uint8Array, name: Tlv): string {
  const rdns = children(der, expectTag(name, tags.sequence, 'Name')).map((rdn) => {
    const attributes = children(der, expectTag(rdn, tags.set, 'relative distinguished name'));
    if (attributes.length === 0) throw malformed('empty relative distinguished name');
    return attributes.map((attribute) => attributeText(der, attribute)).join(' + ');
  });
  return rdns.join(', ');
}
