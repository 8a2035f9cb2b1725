/**
 * The TLV walk's bounds: nesting deeper than the reader allows is malformed input, refused
 * with MalformedDer, never a stack overflow.
 */
import { describe, expect, it } from 'vitest';
import { MalformedDer, readTlv, wellFormed } from './der-reader.ts';

/** `levels` SEQUENCEs, each holding the next, around an empty one. */
function nested(levels: number): Uint8Array {
  let der = Buffer.from([0x30, 0x00]);
  for (let i = 0; i < levels; i++) {
    const length = der.length;
    const header =
      length < 0x80
        ? [0x30, length]
        : length < 0x100
          ? [0x30, 0x81, length]
          : length < 0x10000
            ? [0x30, 0x82, length >> 8, length & 0xff]
            : [0x30, 0x83, length >> 16, (length >> 8) & 0xff, length & 0xff];
    der = Buffer.concat([Buffer.from(header), der]);
  }
  return new Uint8Array(der);
}

function walk(der: Uint8Array): void {
  wellFormed(der, readTlv(der, 0, der.length));
}

describe('wellFormed', () => {
  it('walks values nested 31 levels deep', () => {
    expect(() => {
      walk(nested(31));
    }).not.toThrow();
  });

  it.each([32, 100, 2000])('refuses values nested %i levels deep as malformed', (levels) => {
    expect(() => {
      walk(nested(levels));
    }).toThrow(MalformedDer);
    expect(() => {
      walk(nested(levels));
    }).toThrow(/nested too deep/);
  });
});
