/**
 * Names read from DER print as Node's X509Certificate prints them (OpenSSL's escapes, UTF-8,
 * short attribute names), for every string type and content OpenSSL decodes; contents OpenSSL
 * refuses are refused too.
 */
import { X509Certificate } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DerNode,
  at,
  cloneDer,
  encodeDer,
  nameNode,
  parseDer,
} from '../../test/unit/pki/der-tree.ts';
import { readDerCertificate } from './der-certificate.ts';
import { MalformedDer, tags } from './der-reader.ts';
import { issueCa } from './generate.ts';

const issued = await issueCa({ commonName: 'names', validityDays: 2, now: new Date() });
const [base] = parseDer(issued.certificate.der);
if (base === undefined) throw new Error('no certificate');

/** Index of the subject among the TBSCertificate's fields (after [0] version). */
const subjectField = 5;

function withSubject(name: DerNode): Uint8Array {
  const certificate = cloneDer(base as DerNode);
  const tbs = at(certificate, 0);
  if (tbs.children === undefined) throw new Error('no TBSCertificate');
  tbs.children[subjectField] = name;
  return encodeDer(certificate);
}

/** Node's subject of `der`, one line (as the facts keep it), or undefined when it refuses it. */
function nodeSubject(der: Uint8Array): string | undefined {
  try {
    return new X509Certificate(der).subject.replace(/\n/g, ', ');
  } catch {
    return undefined;
  }
}

function ourSubject(der: Uint8Array): string | undefined {
  try {
    return readDerCertificate(der).subject;
  } catch (error) {
    expect(error).toBeInstanceOf(MalformedDer);
    return undefined;
  }
}

type Attribute = readonly [oid: string, tag: number, value: Uint8Array | string];

const range = (prefix: string, last: number): string[] =>
  Array.from({ length: last }, (_, i) => `${prefix}${String(i + 1)}`);

describe('names read from DER', () => {
  it('name each attribute type as OpenSSL does, or by its OID where the table has no name', () => {
    const oids = [
      ...range('2.5.4.', 110),
      ...range('1.2.840.113549.1.9.', 30),
      ...range('0.9.2342.19200300.100.1.', 60),
      ...range('1.3.6.1.4.1.311.60.2.1.', 4),
      '1.2.3.4',
      '2.999.1',
    ];
    const der = withSubject(nameNode(oids.map((oid): Attribute => [oid, tags.utf8String, 'v'])));
    const ours = ourSubject(der)?.split(', ') ?? [];
    const theirs = nodeSubject(der)?.split(', ') ?? [];
    expect(ours).toHaveLength(oids.length);
    const differing = oids.filter((oid, i) => ours[i] !== theirs[i] && ours[i] !== `${oid}=v`);
    expect(differing).toEqual([]);
    // The common ones are named, not numbered.
    expect(ours.slice(2, 11)).toEqual(theirs.slice(2, 11));
    expect(ours).toContain('emailAddress=v');
    expect(ours).toContain('DC=v');
  });

  const byte = fc.integer({ min: 0, max: 0xff });
  const character = fc.oneof(
    fc.integer({ min: 0, max: 0xd7ff }),
    fc.integer({ min: 0xe000, max: 0xffff }),
  );
  const point = fc.oneof(character, fc.integer({ min: 0x10000, max: 0x10ffff }));
  const wide = (width: 2 | 4, points: readonly number[]): Uint8Array =>
    Uint8Array.from(
      points.flatMap((value) =>
        Array.from({ length: width }, (_, i) => (value >> (8 * (width - 1 - i))) & 0xff),
      ),
    );
  // Characters that escape rules treat specially turn up often.
  const special = fc.constantFrom(
    0x20,
    0x23,
    0x22,
    0x2b,
    0x2c,
    0x3b,
    0x3c,
    0x3d,
    0x3e,
    0x5c,
    0x00,
    0x0a,
    0x7f,
  );
  const text = (unit: fc.Arbitrary<number>) => fc.array(fc.oneof(special, unit), { maxLength: 12 });
  const value: fc.Arbitrary<readonly [number, Uint8Array]> = fc.oneof(
    text(point).map(
      (points) => [tags.utf8String, Buffer.from(String.fromCodePoint(...points), 'utf8')] as const,
    ),
    fc.tuple(
      fc.constantFrom(tags.printableString, tags.ia5String, tags.t61String, tags.numericString),
      text(byte).map((bytes) => Uint8Array.from(bytes)),
    ),
    text(character).map((points) => [tags.bmpString, wide(2, points)] as const),
    text(point).map((points) => [tags.universalString, wide(4, points)] as const),
  );
  const attribute = fc.tuple(
    fc.constantFrom('2.5.4.3', '2.5.4.10', '1.2.840.113549.1.9.1', '1.2.3.4'),
    value,
  );
  const name = fc.array(fc.array(attribute, { minLength: 1, maxLength: 3 }), { maxLength: 4 });

  it('print every value of every string type as Node does, with RDNs of one or more attributes', () => {
    fc.assert(
      fc.property(name, (rdns) => {
        const node: DerNode = {
          tag: tags.sequence,
          children: rdns.map((attributes) => ({
            tag: tags.set,
            children: attributes.map(
              ([oid, [tag, contents]]) =>
                nameNode([[oid, tag, contents]]).children?.[0]?.children?.[0] ?? { tag: 0 },
            ),
          })),
        };
        const der = withSubject(node);
        expect(ourSubject(der)).toBeDefined();
        expect(ourSubject(der)).toBe(nodeSubject(der));
      }),
      { numRuns: 2000 },
    );
  });

  const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
  const refusedByBoth: readonly (readonly [string, number, Uint8Array])[] = [
    ['a UTF8String that is not UTF-8', tags.utf8String, bytes(0x61, 0xff)],
    ['an overlong UTF-8 sequence', tags.utf8String, bytes(0xc0, 0x80)],
    ['a UTF-8 surrogate', tags.utf8String, bytes(0xed, 0xa0, 0x80)],
    ['UTF-8 past U+10FFFF', tags.utf8String, bytes(0xf4, 0x90, 0x80, 0x80)],
    ['a BMPString of an odd length', tags.bmpString, bytes(0x00, 0x61, 0x00)],
    ['a BMPString surrogate', tags.bmpString, bytes(0xd8, 0x00)],
    ['a UniversalString of three bytes', tags.universalString, bytes(0, 0, 0x61)],
    ['a UniversalString past U+10FFFF', tags.universalString, bytes(0, 0x11, 0, 0)],
    ['a UniversalString surrogate', tags.universalString, bytes(0, 0, 0xdc, 0)],
    ['an INTEGER value', tags.integer, bytes(1)],
    ['an OCTET STRING value', tags.octetString, bytes(1)],
    ['a VisibleString value', 0x1a, bytes(0x61)],
    ['a GeneralString value', 0x1b, bytes(0x61)],
    ['a NULL value', tags.null, bytes()],
  ];

  it.each(refusedByBoth)('refuse %s, as OpenSSL does', (_, tag, contents) => {
    const der = withSubject(nameNode([['2.5.4.3', tag, contents]]));
    expect(nodeSubject(der)).toBeUndefined();
    expect(() => readDerCertificate(der)).toThrow(MalformedDer);
  });

  it('refuse what OpenSSL reads but no CA writes: BIT STRING and SEQUENCE values, empty RDNs', () => {
    const bitString = withSubject(nameNode([['2.5.4.3', tags.bitString, bytes(0, 1)]]));
    const empty = withSubject({ tag: tags.sequence, children: [{ tag: tags.set, children: [] }] });
    for (const der of [bitString, empty]) {
      expect(nodeSubject(der)).toBeDefined();
      expect(() => readDerCertificate(der)).toThrow(MalformedDer);
    }
  });
});
