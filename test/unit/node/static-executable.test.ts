import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isStaticExecutable } from '../../../dev/lib/node/static-executable.ts';

/** A 64-bit little-endian ELF header with program headers of the given types. */
function elf(types: readonly number[]): Buffer {
  const header = Buffer.alloc(64 + 56 * types.length);
  header.writeUInt32BE(0x7f454c46, 0);
  header[4] = 2;
  header[5] = 1;
  header.writeBigUInt64LE(64n, 32);
  header.writeUInt16LE(56, 54);
  header.writeUInt16LE(types.length, 56);
  types.forEach((type, index) => header.writeUInt32LE(type, 64 + index * 56));
  return header;
}

describe('isStaticExecutable', () => {
  it.each([
    ['loadable segments only', elf([1, 1, 4]), true],
    ['an interpreter (PT_INTERP)', elf([6, 3, 1]), false],
    ['not ELF', Buffer.from('#!/bin/sh\necho hi\n'.padEnd(64)), false],
    [
      'a 32-bit ELF',
      Buffer.concat([elf([1]).subarray(0, 4), Buffer.from([1, 1]), elf([1]).subarray(6)]),
      false,
    ],
    ['program headers beyond what was read', elf([1, 1]).subarray(0, 100), false],
  ])('%s → %s', (_, header, expected) => {
    expect(isStaticExecutable(header)).toBe(expected);
  });

  it('tells this machine’s static busybox from its dynamically linked bash', () => {
    expect(isStaticExecutable(readFileSync('/bin/busybox').subarray(0, 4096))).toBe(true);
    expect(isStaticExecutable(readFileSync('/bin/bash').subarray(0, 4096))).toBe(false);
  });
});
