import { mkdtempSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../dev/lib/atomic-writer.ts';

describe('writeAtomicProjection', () => {
  it('swaps ..data to a new revision and removes keys that vanished', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'atomic-'));
    await writeAtomicProjection(dir, { 'tls.crt': Buffer.from('a'), 'tls.key': Buffer.from('k') });
    const first = readlinkSync(join(dir, '..data'));
    await writeAtomicProjection(dir, { 'tls.crt': Buffer.from('b') });
    const second = readlinkSync(join(dir, '..data'));
    expect(second).not.toBe(first);
    expect(readdirSync(dir).sort()).toEqual(['..data', second, 'tls.crt'].sort());
    expect(readlinkSync(join(dir, 'tls.crt'))).toBe('..data/tls.crt');
    expect(readFileSync(join(dir, 'tls.crt'), 'utf8')).toBe('b');
  });

  it('rejects a key that would escape the directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'atomic-'));
    await expect(writeAtomicProjection(dir, { '../evil': Buffer.from('x') })).rejects.toThrow(
      /not a valid projected file name/,
    );
  });
});
