import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../dev/lib/atomic-writer.ts';
import { readMountedRevision } from './mounted-revision.ts';

const root = await mkdtemp(join(tmpdir(), 'haptic-mounted-'));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const names = ['tls.crt', 'tls.key', 'ca.crt'];
const revision = (n: number) => ({
  'tls.crt': Buffer.from(`cert ${n}`),
  'tls.key': Buffer.from(`key ${n}`),
  'ca.crt': Buffer.from(`ca ${n}`),
});

describe('reading a projected Secret volume', () => {
  it('reads the files of the current ..data revision', async () => {
    const dir = join(root, 'simple');
    await writeAtomicProjection(dir, revision(1));
    const read = await readMountedRevision(dir, names);
    expect(read.revision).toMatch(/^\.\./);
    expect(Buffer.from(read.files['tls.key'] ?? []).toString()).toBe('key 1');
  });

  it('leaves out keys the Secret does not have', async () => {
    const dir = join(root, 'partial');
    await writeAtomicProjection(dir, { 'ca.crt': Buffer.from('ca') });
    expect(Object.keys((await readMountedRevision(dir, names)).files)).toEqual(['ca.crt']);
  });

  it('reads nothing from a directory that does not exist', async () => {
    expect((await readMountedRevision(join(root, 'absent'), names)).files).toEqual({});
  });

  it('reads a plain directory too', async () => {
    const dir = join(root, 'plain');
    await mkdir(dir);
    await writeFile(join(dir, 'ca.crt'), 'plain ca');
    const read = await readMountedRevision(dir, names);
    expect(read.revision).toBeUndefined();
    expect(Buffer.from(read.files['ca.crt'] ?? []).toString()).toBe('plain ca');
  });

  it('never mixes files of two revisions while the kubelet swaps ..data', async () => {
    const dir = join(root, 'swapping');
    await writeAtomicProjection(dir, revision(0));
    const swapping = { on: true, swaps: 0 };
    const writer = (async () => {
      while (swapping.on) {
        swapping.swaps += 1;
        await writeAtomicProjection(dir, revision(swapping.swaps));
      }
    })();
    const seen = new Set<string>();
    try {
      for (let reads = 0; reads < 200 || swapping.swaps < 50; reads += 1) {
        const { files } = await readMountedRevision(dir, names);
        const numbers = names.map(
          (name) =>
            Buffer.from(files[name] ?? [])
              .toString()
              .split(' ')[1],
        );
        expect(new Set(numbers).size).toBe(1);
        seen.add(numbers[0] ?? '');
      }
    } finally {
      swapping.on = false;
      await writer;
    }
    expect(seen.size).toBeGreaterThan(1);
  });
});
