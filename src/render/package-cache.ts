/**
 * The package's own cache directory, `node_modules/.cache/haptic`, beside Node's module
 * compile cache and only while that cache is on (`src/cli/main.ts`): `NODE_DISABLE_COMPILE_CACHE=1`
 * and the read-only image compute everything each time. What is kept here is named by a SHA-256
 * of everything it depends on, so a changed input never reads a stale entry; it lives only in
 * the package's own directory, never a shared temporary one.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../version.ts';

/** The cache directory while Node's compile cache is on, else undefined. */
export function packageCacheDir(): string | undefined {
  return nodeModule.getCompileCacheDir() === undefined
    ? undefined
    : fileURLToPath(new URL('node_modules/.cache/haptic', packageRoot));
}

/** Writes `file` in `dir` whole or not at all (a rename); a directory that cannot be written is skipped. */
export function keepInPackageCache(dir: string, file: string, text: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, text, { mode: 0o644 });
    renameSync(partial, file);
  } catch {
    // Read-only or full: the next process computes it again, as without a cache.
  }
}
