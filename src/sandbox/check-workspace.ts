/**
 * The private directory of one check, under the sandbox's own work directory:
 * `<work>/check-XXXXXX/config/` holds the files exactly as in an agent's base directory,
 * `<work>/check-XXXXXX/home/` is HOME and TMPDIR of `haproxy -c`. Paths were validated as an
 * agent validates them (relative, no `.`/`..`/empty segments, no file under a file), the
 * directory is fresh (nothing to follow or overwrite), and every file is created exclusively
 * (`wx`), so a path can never leave the directory. Removed when the check ends.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DesiredFile } from '../agent-api/apply-request.ts';
import { inBatches } from '../in-batches.ts';

/** Files written at once: few open files, and a bundle's few large ones written together. */
const writeBatch = 16;

export interface CheckWorkspace {
  readonly configDir: string;
  readonly scratchDir: string;
  remove(): Promise<void>;
}

export async function createCheckWorkspace(
  workDir: string,
  files: readonly DesiredFile[],
): Promise<CheckWorkspace> {
  const root = await mkdtemp(join(workDir, 'check-'));
  // Retried: a killed check's last writes can race the removal (ENOTEMPTY, EBUSY).
  const remove = (): Promise<void> =>
    rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  try {
    const configDir = join(root, 'config');
    const scratchDir = join(root, 'home');
    await mkdir(configDir, { mode: 0o700 });
    await mkdir(scratchDir, { mode: 0o700 });
    // Directories first, one by one (nested ones in order), then the files a batch at a time
    // (a set may hold thousands: one open file each); all writes of a batch end before a
    // failure removes the directory.
    for (const directory of new Set(files.map((file) => dirname(join(configDir, file.path))))) {
      await mkdir(directory, { recursive: true, mode: 0o700 });
    }
    await inBatches(files, writeBatch, (file) =>
      writeFile(join(configDir, file.path), file.content, { mode: 0o600, flag: 'wx' }),
    );
    return { configDir, scratchDir, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
