/**
 * The files HAProxy reads, under the base directory, changed so that a failed apply can
 * always be undone: new content is staged first, the files it replaces are kept as the
 * last-known-good copy (hard links), a journal records the swap before it starts, and the
 * swap renames each file into place, haproxy.cfg last. The agent's own work lives in
 * `<base>/.haptic/`, which no apply path can reach (paths never start with a dot).
 *
 * After a crash in the middle of an apply, `recover()` finds the journal and restores the
 * last-known-good files. Each step is flushed to the disk before the next relies on it
 * (durable-write.ts): the staged data and the kept links before the journal, the journal before
 * the first live rename, the renames before the journal's end; a power loss at any point
 * leaves the old set with its journal, or the new set without one.
 */
import {
  copyFile,
  link,
  lstat,
  mkdir,
  readFile,
  readdir,
  rename,
  rm,
  rmdir,
} from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { type DesiredFile, pathProblem } from '../agent-api/apply-request.ts';
import { errorCode } from '../errors.ts';
import { inBatches } from '../in-batches.ts';
import { flush, replaceDurably, writeDurably } from './durable-write.ts';
import type { FilePlan } from './file-plan.ts';

interface Journal {
  readonly writes: readonly string[];
  readonly removals: readonly string[];
  /** Paths among `writes` that did not exist before. */
  readonly created: readonly string[];
}

/**
 * A write that would change what a path is on disk, which an apply never does (the swap keeps
 * and restores files, not directory trees).
 */
export type PathConflict =
  | {
      /** The path is a directory that holds files (`holding`, relative, sorted). */
      readonly kind: 'directory';
      readonly path: string;
      readonly holding: readonly string[];
    }
  | {
      /** `file`, a parent of the path, is a file. */
      readonly kind: 'file';
      readonly path: string;
      readonly file: string;
    };

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** Files staged (written and flushed) at once: few open files, the flushes overlapping. */
const stageBatch = 16;

/** The directories holding `path` under `root`, innermost first, `root` last. */
function directoriesOf(root: string, path: string): string[] {
  const segments = path.split('/');
  const directories: string[] = [];
  for (let depth = segments.length - 1; depth >= 0; depth -= 1) {
    directories.push(join(root, ...segments.slice(0, depth)));
  }
  return directories;
}

/** Files holding a private key are readable by owner and group only. */
function modeFor(content: Buffer): number {
  return content.includes('PRIVATE KEY') ? 0o640 : 0o644;
}

export class ConfigFileStore {
  readonly baseDir: string;
  readonly #workDir: string;
  #tidying: Promise<void> = Promise.resolve();

  constructor(baseDir: string) {
    this.baseDir = baseDir;
    this.#workDir = join(baseDir, '.haptic');
  }

  get #stagingDir(): string {
    return join(this.#workDir, 'staging');
  }

  get #previousDir(): string {
    return join(this.#workDir, 'last-known-good');
  }

  get #journalPath(): string {
    return join(this.#workDir, 'journal.json');
  }

  live(path: string): string {
    return join(this.baseDir, path);
  }

  /** Creates the directories. */
  async prepare(): Promise<void> {
    await mkdir(this.#workDir, { recursive: true, mode: 0o755 });
  }

  /**
   * Restores the last-known-good files if an apply was interrupted; true when it did (the
   * caller then reloads HAProxy so it runs what the files say).
   */
  async recover(): Promise<boolean> {
    const journal = await this.#readJournal();
    if (journal === undefined) {
      await this.#clearWork();
      return false;
    }
    await this.#restore(journal);
    return true;
  }

  /**
   * The writes that would turn a directory holding files into a file, or put a file under a
   * file; nothing changes. A directory that holds no files (left by an older agent) is no
   * conflict: the swap replaces it.
   */
  async conflicts(writes: readonly DesiredFile[]): Promise<PathConflict[]> {
    const found: PathConflict[] = [];
    for (const { path } of writes) {
      const conflict = await this.#conflict(path);
      if (conflict !== undefined) found.push(conflict);
    }
    return found;
  }

  async #conflict(path: string): Promise<PathConflict | undefined> {
    const segments = path.split('/');
    for (let depth = 1; depth < segments.length; depth += 1) {
      const parent = segments.slice(0, depth).join('/');
      const kind = await this.#kindOf(parent);
      if (kind === 'absent') return undefined;
      if (kind === 'file') return { kind: 'file', path, file: parent };
    }
    if ((await this.#kindOf(path)) !== 'directory') return undefined;
    const holding = await this.#filesUnder(path);
    return holding.length === 0 ? undefined : { kind: 'directory', path, holding };
  }

  async #kindOf(path: string): Promise<'absent' | 'directory' | 'file'> {
    try {
      return (await lstat(this.live(path))).isDirectory() ? 'directory' : 'file';
    } catch (error) {
      // ENOTDIR: a parent is a file, so the path does not exist.
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return 'absent';
      throw error;
    }
  }

  async #filesUnder(path: string): Promise<string[]> {
    const root = this.live(path);
    const entries = await readdir(root, { recursive: true, withFileTypes: true });
    return entries
      .filter((entry) => !entry.isDirectory())
      .map((entry) =>
        relative(this.baseDir, join(entry.parentPath, entry.name)).split(sep).join('/'),
      )
      .sort();
  }

  /**
   * Puts the plan's files in place: the new content is staged while the files it replaces
   * are kept as the last-known-good copies (neither touches a live file), then the journal is
   * recorded and the staged files are moved in. After a failure, `rollback` undoes it.
   */
  async put(plan: FilePlan): Promise<void> {
    // What the last apply left is cleared after it ended (commit), off its answer's path.
    await this.#tidying;
    // Both end before a failure is thrown, so a rollback never runs beside either.
    const [staged, kept] = await Promise.allSettled([
      this.#stage(plan.writes),
      this.#keepAll(plan),
    ]);
    if (staged.status === 'rejected') throw staged.reason;
    if (kept.status === 'rejected') throw kept.reason;
    const created = kept.value;
    await this.#writeJournal({
      writes: plan.writes.map((file) => file.path),
      removals: plan.removals,
      created,
    });
    for (const file of plan.writes) {
      const target = this.live(file.path);
      await mkdir(dirname(target), { recursive: true });
      // A directory here holds no files (conflicts() refuses the others): it goes.
      if ((await this.#kindOf(file.path)) === 'directory') await rm(target, { recursive: true });
      await rename(join(this.#stagingDir, file.path), target);
    }
    for (const path of plan.removals) await this.#remove(path);
    await this.#syncLive([...plan.writes.map((file) => file.path), ...plan.removals]);
  }

  /** Writes the new content into the staging directory; live files are untouched. */
  async #stage(writes: readonly DesiredFile[]): Promise<void> {
    await rm(this.#stagingDir, { recursive: true, force: true });
    const staged = writes.map((file) => ({ file, target: join(this.#stagingDir, file.path) }));
    for (const directory of new Set(staged.map(({ target }) => dirname(target)))) {
      await mkdir(directory, { recursive: true });
    }
    await inBatches(staged, stageBatch, ({ file, target }) =>
      writeDurably(target, file.content, modeFor(file.content)),
    );
  }

  /** Keeps the files the plan replaces or removes; returns the paths that had none to keep. */
  async #keepAll(plan: FilePlan): Promise<string[]> {
    await rm(this.#previousDir, { recursive: true, force: true });
    const created: string[] = [];
    // The kept links and the directories made for them; the work directory, which holds
    // the last-known-good directory, is flushed with the journal written next.
    const keptIn = new Set<string>();
    for (const path of [...plan.writes.map((file) => file.path), ...plan.removals]) {
      if (!(await this.#keep(path))) {
        created.push(path);
        continue;
      }
      for (const directory of directoriesOf(this.#previousDir, path)) keptIn.add(directory);
    }
    for (const directory of keptIn) await flush(directory);
    return created;
  }

  /** Removes a live file and the directories it leaves empty, up to the base directory. */
  async #remove(path: string): Promise<void> {
    try {
      await rm(this.live(path), { force: true });
    } catch (error) {
      // A parent is a file: there is nothing to remove.
      if (errorCode(error) === 'ENOTDIR') return;
      throw error;
    }
    const segments = path.split('/');
    for (let depth = segments.length - 1; depth > 0; depth -= 1) {
      try {
        await rmdir(this.live(segments.slice(0, depth).join('/')));
      } catch (error) {
        const code = errorCode(error);
        if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT') return;
        throw error;
      }
    }
  }

  /** Puts the last-known-good files back after a failed apply. */
  async rollback(): Promise<void> {
    const journal = await this.#readJournal();
    if (journal !== undefined) await this.#restore(journal);
  }

  /**
   * Ends a successful apply: without the journal, the last-known-good copies are no longer
   * restored; they and the staging directory are cleared after this apply's answer, and the
   * next apply waits for that (a start clears them too).
   */
  async commit(): Promise<void> {
    await rm(this.#journalPath, { force: true });
    await flush(this.#workDir);
    // A failure here leaves the directories, which the next apply clears (or fails on).
    this.#tidying = this.#clearWork().catch(() => undefined);
  }

  /** Hard-links the live file into the last-known-good directory; false if there is none. */
  async #keep(path: string): Promise<boolean> {
    // An empty directory in the way of a write has nothing to keep.
    if ((await this.#kindOf(path)) !== 'file') return false;
    const source = this.live(path);
    const target = join(this.#previousDir, path);
    await mkdir(dirname(target), { recursive: true });
    try {
      await link(source, target);
      return true;
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT') return false;
      if (code !== 'EXDEV' && code !== 'EPERM') throw error;
    }
    try {
      await copyFile(source, target);
      await flush(target);
      return true;
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return false;
      throw error;
    }
  }

  async #restore(journal: Journal): Promise<void> {
    const created = new Set(journal.created);
    for (const path of [...journal.writes, ...journal.removals]) {
      if (created.has(path)) {
        await this.#remove(path);
        continue;
      }
      const kept = join(this.#previousDir, path);
      await mkdir(dirname(this.live(path)), { recursive: true });
      try {
        await rename(kept, this.live(path));
      } catch (error) {
        // Already restored by an earlier, interrupted recovery.
        if (errorCode(error) !== 'ENOENT') throw error;
      }
    }
    await this.#syncLive([...journal.writes, ...journal.removals]);
    await rm(this.#journalPath, { force: true });
    await flush(this.#workDir);
    await this.#clearWork();
  }

  async #clearWork(): Promise<void> {
    await rm(this.#stagingDir, { recursive: true, force: true });
    await rm(this.#previousDir, { recursive: true, force: true });
  }

  async #writeJournal(journal: Journal): Promise<void> {
    await replaceDurably(this.#journalPath, JSON.stringify(journal), 0o600);
  }

  /**
   * Flushes the live directories these paths were renamed into or removed from, and every
   * directory above them up to the base directory (an apply or a restore may have made them);
   * a directory a removal took is skipped.
   */
  async #syncLive(paths: readonly string[]): Promise<void> {
    const directories = new Set<string>();
    for (const path of paths) {
      for (const directory of directoriesOf(this.baseDir, path)) directories.add(directory);
    }
    for (const directory of directories) {
      try {
        await flush(directory);
      } catch (error) {
        const code = errorCode(error);
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      }
    }
  }

  async #readJournal(): Promise<Journal | undefined> {
    let text: string;
    try {
      text = await readFile(this.#journalPath, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw error;
    }
    const value: unknown = JSON.parse(text);
    if (
      typeof value === 'object' &&
      value !== null &&
      'writes' in value &&
      'removals' in value &&
      'created' in value &&
      isStringArray(value.writes) &&
      isStringArray(value.removals) &&
      isStringArray(value.created) &&
      [...value.writes, ...value.removals].every((path) => pathProblem(path) === undefined)
    ) {
      return { writes: value.writes, removals: value.removals, created: value.created };
    }
    throw new Error(
      `${this.#journalPath} is not an apply journal; remove it after checking ${this.baseDir}.`,
    );
  }
}
