import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readlink,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { basename, join } from 'node:path';

/**
 * Writes a Secret's data into `dir` with the kubelet's atomic-writer layout:
 *
 *   dir/..2026_11_29_15_20_01.123456789/<key>   one revision's files
 *   dir/..data -> ..2026_11_29_...              swapped atomically (rename of a new symlink)
 *   dir/<key>  -> ..data/<key>                  one stable symlink per key
 *
 * Readers that open `..data/<key>` see one whole revision. Keys missing from `data` vanish
 * (their symlink is removed after the swap, the old revision directory is deleted).
 */
export async function writeAtomicProjection(
  dir: string,
  data: Readonly<Record<string, Uint8Array>>,
): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  for (const key of Object.keys(data)) {
    if (!/^[-._a-zA-Z0-9]+$/.test(key) || key.startsWith('..')) {
      throw new Error(`Secret key ${JSON.stringify(key)} is not a valid projected file name.`);
    }
  }
  const previous = await currentRevision(dir);
  // Like the kubelet: a time-stamped, uniquely suffixed revision directory.
  const stamp = new Date().toISOString().replace(/[-:]/g, '_').replace('T', '_').slice(0, 19);
  const revisionDir = await mkdtemp(join(dir, `..${stamp}.`));
  await chmod(revisionDir, 0o755);
  const revision = basename(revisionDir);
  for (const [key, value] of Object.entries(data)) {
    await writeFile(join(revisionDir, key), value, { mode: 0o644 });
  }
  const staging = join(dir, '..data_tmp');
  await rm(staging, { force: true });
  await symlink(revision, staging);
  await rename(staging, join(dir, '..data'));

  const wanted = new Set(Object.keys(data));
  for (const key of wanted) {
    const link = join(dir, key);
    const target = join('..data', key);
    const existing = await readlink(link).catch(() => undefined);
    if (existing !== target) {
      await rm(link, { force: true });
      await symlink(target, link);
    }
  }
  for (const entry of await readdir(dir)) {
    if (!entry.startsWith('..') && !wanted.has(entry)) await rm(join(dir, entry), { force: true });
  }
  if (previous !== undefined && previous !== revision) {
    await rm(join(dir, previous), { recursive: true, force: true });
  }
}

async function currentRevision(dir: string): Promise<string | undefined> {
  return readlink(join(dir, '..data')).catch(() => undefined);
}
