/**
 * Writes that survive a power loss in the order they were made. A rename or a write only
 * reaches the page cache: after a power loss, a file renamed over another can be empty (its
 * data never written) and a rename can be lost while a later one is kept. The agent's files
 * are written so that what a crash leaves is always one of the states `recover()` and
 * `loadState()` understand: a file's data is flushed before it is renamed into place, and a
 * directory is flushed after the renames in it that a later step relies on.
 */
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Writes `content` to `path` (created or truncated) and flushes it to the disk. */
export async function writeDurably(
  path: string,
  content: string | Buffer,
  mode: number,
): Promise<void> {
  const handle = await open(path, 'w', mode);
  try {
    await handle.writeFile(content);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `content` atomically and durably: a temporary file beside it is written
 * and flushed, renamed over it, and the directory flushed. A crash leaves the old file or the
 * new one, never a part of either (and perhaps the temporary file, which the next write
 * overwrites); a failure removes the temporary file.
 */
export async function replaceDurably(
  path: string,
  content: string | Buffer,
  mode: number,
): Promise<void> {
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.tmp`);
  try {
    await writeDurably(temporary, content, mode);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  await flush(directory);
}

/**
 * Flushes what is already written at `path` to the disk: a file's data (a copy), or a
 * directory's entries, the files and directories created, renamed into or removed from it (a
 * new directory's own entry is in its parent, flushed with the parent).
 */
export async function flush(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
