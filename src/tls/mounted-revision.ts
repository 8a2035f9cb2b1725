/**
 * Reads one consistent revision of a mounted Secret volume. The kubelet writes each revision
 * into its own directory and swaps the `..data` symlink atomically; reading through the
 * revision's own directory and checking `..data` again afterwards means a certificate and a
 * key always come from the same revision, never one from before a swap and one from after.
 * A plain directory (no `..data`) is read twice and accepted when both reads agree.
 */
import { readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { HapticError, describeError, errorCode, errorCodes } from '../errors.ts';
import { maxSecretBytes } from '../secrets/layout.ts';

/** How often a read is retried when the revision changes under it. @default 5 */
const attempts = 5;

export interface MountedRevision {
  /** The revision directory `..data` pointed at, or undefined for a plain directory. */
  readonly revision: string | undefined;
  /** The files found, by name; absent names are missing from the Secret. */
  readonly files: Readonly<Record<string, Uint8Array>>;
}

async function revisionOf(dir: string): Promise<string | undefined> {
  try {
    return await readlink(join(dir, '..data'));
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'EINVAL') return undefined;
    throw error;
  }
}

/** The files of `names` in `dir`; missing files are left out. Throws `Vanished` if `dir` went away. */
async function readFiles(
  dir: string,
  names: readonly string[],
): Promise<Record<string, Uint8Array>> {
  const files: Record<string, Uint8Array> = {};
  for (const name of names) {
    let bytes: Buffer;
    try {
      bytes = await readFile(join(dir, name));
    } catch (error) {
      if (errorCode(error) === 'ENOENT') continue;
      throw error;
    }
    if (bytes.byteLength > maxSecretBytes) {
      throw new HapticError(
        errorCodes.TLS_MATERIAL_INVALID,
        `${join(dir, name)} is ${bytes.byteLength} bytes, more than the ${maxSecretBytes} a Secret may hold.`,
      );
    }
    files[name] = bytes;
  }
  return files;
}

function sameFiles(a: Record<string, Uint8Array>, b: Record<string, Uint8Array>): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  return names.every((name) => {
    const left = a[name];
    const right = b[name];
    return left !== undefined && right !== undefined && Buffer.from(left).equals(right);
  });
}

/**
 * Reads `names` from `dir` as one revision. Throws `TLS_MATERIAL_INVALID` when the directory
 * cannot be read or keeps changing while it is read.
 */
export async function readMountedRevision(
  dir: string,
  names: readonly string[],
): Promise<MountedRevision> {
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    try {
      const before = await revisionOf(dir);
      const files = await readFiles(before === undefined ? dir : join(dir, before), names);
      const after = await revisionOf(dir);
      if (before === undefined && after === undefined) {
        // A plain directory: accept only two identical reads.
        if (sameFiles(files, await readFiles(dir, names))) return { revision: undefined, files };
      } else if (before === after) {
        return { revision: before, files };
      }
    } catch (error) {
      if (error instanceof HapticError) throw error;
      // The kubelet removes the old revision directory after a swap: read again.
      lastError = error;
    }
  }
  throw new HapticError(
    errorCodes.TLS_MATERIAL_INVALID,
    lastError === undefined
      ? `${dir} changed during ${attempts} reads in a row; its files could not be read as one revision.`
      : `${dir} cannot be read: ${describeError(lastError)}.`,
    lastError === undefined ? undefined : { cause: lastError },
  );
}
