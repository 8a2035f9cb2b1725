/**
 * The digest of a whole set of files, from each file's path and digest (never the content
 * again): the identity a runtime change names its base and result by. The controller computes
 * it from the digests it sent, the agent from the digests it recorded. Pure.
 */
import { createHash } from 'node:crypto';

/** One file of a set: its path under the base directory and the digest of its content. */
export interface FileDigest {
  readonly path: string;
  readonly digest: string;
}

/** `sha256:` over the files sorted by path, one `path digest` line each (paths have no spaces or line breaks). */
export function fileSetDigest(files: readonly FileDigest[]): string {
  const lines = files
    .map((file) => `${file.path} ${file.digest}\n`)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `sha256:${createHash('sha256').update(lines.join('')).digest('hex')}`;
}
