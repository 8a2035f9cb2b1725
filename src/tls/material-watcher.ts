/**
 * Keeps the mounted TLS material of one directory current, in the manner of
 * controller-runtime's certwatcher: loads eagerly, watches the directory (the kubelet swaps
 * `..data`), polls as a fallback, and replaces the snapshot only when the bytes change. A
 * revision that cannot be read or decoded replaces the snapshot too: it is never papered over
 * with the previous material, so stale trust is never restored.
 */
import { type FSWatcher, watch } from 'node:fs';
import type { Logger } from 'pino';
import { describeError } from '../errors.ts';
import type { Lifecycle } from '../lifecycle/lifecycle.ts';
import { readMountedRevision } from './mounted-revision.ts';
import { materialReasons } from './reasons.ts';
import {
  type MaterialDecoding,
  decodeTlsMaterial,
  materialStatusAt,
  tlsFileNames,
} from './tls-material.ts';

export interface TlsMaterialSnapshot {
  /** The directory, as messages name it. */
  readonly dir: string;
  /** The `..data` revision read, if the directory is a projected volume. */
  readonly revision: string | undefined;
  readonly decoding: MaterialDecoding;
  /** When these bytes were first read. */
  readonly loadedAt: Date;
}

/** Anything that serves current TLS material: the watcher, or a fixed snapshot. */
export interface TlsMaterialSource {
  current(): TlsMaterialSnapshot;
  /** Calls `listener` after each change of the material; returns the unsubscribe function. */
  onChange(listener: (snapshot: TlsMaterialSnapshot) => void): () => void;
}

export interface TlsMaterialWatcherOptions {
  readonly dir: string;
  readonly logger: Logger;
  /** Fallback polling interval. @default 10 seconds */
  readonly pollIntervalMs?: number;
  /** How long events are gathered before one read. @default 5 ms */
  readonly debounceMs?: number;
}

export interface TlsMaterialCounters {
  readonly reads: number;
  readonly readErrors: number;
  readonly changes: number;
}

export class TlsMaterialWatcher implements TlsMaterialSource {
  readonly #dir: string;
  readonly #logger: Logger;
  readonly #debounceMs: number;
  readonly #listeners = new Set<(snapshot: TlsMaterialSnapshot) => void>();
  readonly #poll: NodeJS.Timeout;
  #snapshot: TlsMaterialSnapshot;
  #watcher: FSWatcher | undefined;
  #debounce: NodeJS.Timeout | undefined;
  /** The read in progress, and whether another one was asked for meanwhile. */
  #reading: Promise<void> | undefined;
  #again = false;
  #closed = false;
  #reads = 0;
  #readErrors = 0;
  #changes = 0;

  private constructor(options: TlsMaterialWatcherOptions, snapshot: TlsMaterialSnapshot) {
    this.#dir = options.dir;
    this.#logger = options.logger;
    this.#debounceMs = options.debounceMs ?? 5;
    this.#snapshot = snapshot;
    this.#poll = setInterval(() => {
      this.#ensureWatch();
      void this.refresh();
    }, options.pollIntervalMs ?? 10_000);
    this.#poll.unref();
    this.#ensureWatch();
  }

  /** Reads the directory once, then keeps watching it. Never fails for bad material. */
  static async start(options: TlsMaterialWatcherOptions): Promise<TlsMaterialWatcher> {
    const watcher = new TlsMaterialWatcher(options, {
      dir: options.dir,
      revision: undefined,
      decoding: {
        ok: false,
        digest: '',
        reason: materialReasons.MaterialMissing,
        message: `${options.dir} has not been read yet.`,
      },
      loadedAt: new Date(),
    });
    await watcher.refresh();
    return watcher;
  }

  current(): TlsMaterialSnapshot {
    return this.#snapshot;
  }

  onChange(listener: (snapshot: TlsMaterialSnapshot) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  counters(): TlsMaterialCounters {
    return { reads: this.#reads, readErrors: this.#readErrors, changes: this.#changes };
  }

  /** Reads the directory now (coalescing with a read in progress); resolves when done. */
  async refresh(): Promise<void> {
    if (this.#closed) return;
    if (this.#reading !== undefined) {
      this.#again = true;
      return this.#reading;
    }
    this.#reading = (async () => {
      do {
        this.#again = false;
        await this.#readOnce();
      } while (this.#readAgain());
    })().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  /** Whether a read was asked for while the last one ran (TypeScript cannot see that it may change). */
  #readAgain(): boolean {
    return this.#again && !this.#closed;
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#poll);
    clearTimeout(this.#debounce);
    this.#watcher?.close();
    this.#watcher = undefined;
    this.#listeners.clear();
  }

  async #readOnce(): Promise<void> {
    this.#reads += 1;
    let revision: string | undefined;
    let decoding: MaterialDecoding;
    try {
      const read = await readMountedRevision(this.#dir, tlsFileNames);
      revision = read.revision;
      decoding = decodeTlsMaterial(read.files, this.#dir);
    } catch (error) {
      this.#readErrors += 1;
      decoding = {
        ok: false,
        digest: `unreadable:${describeError(error)}`,
        reason: materialReasons.MaterialUnreadable,
        message: describeError(error),
      };
    }
    if (this.#closed) return;
    const previous = this.#snapshot;
    const digest = decoding.ok ? decoding.material.digest : decoding.digest;
    const previousDigest = previous.decoding.ok
      ? previous.decoding.material.digest
      : previous.decoding.digest;
    if (digest === previousDigest && previous.decoding.ok === decoding.ok) {
      if (revision !== previous.revision) this.#snapshot = { ...previous, revision };
      return;
    }
    const snapshot = { dir: this.#dir, revision, decoding, loadedAt: new Date() };
    this.#snapshot = snapshot;
    this.#changes += 1;
    this.#log(snapshot);
    for (const listener of this.#listeners) listener(snapshot);
  }

  #log(snapshot: TlsMaterialSnapshot): void {
    const { decoding } = snapshot;
    const context = { dir: this.#dir, revision: snapshot.revision };
    const status = materialStatusAt(decoding, new Date(), this.#dir);
    if (!status.ok) {
      this.#logger.error(
        { ...context, reason: status.reason },
        `TLS material unusable: ${status.message}`,
      );
      return;
    }
    const [leaf] = status.material.chain;
    this.#logger.info(
      {
        ...context,
        subject: leaf.subject,
        notAfter: leaf.notAfter.toISOString(),
        trustedCas: status.material.trust.length,
        previousCaUntil: status.trust.previousUntil?.toISOString(),
      },
      'TLS material loaded',
    );
  }

  #ensureWatch(): void {
    if (this.#watcher !== undefined || this.#closed) return;
    try {
      const watcher = watch(this.#dir, { persistent: false }, () => {
        this.#schedule();
      });
      watcher.on('error', () => {
        watcher.close();
        if (this.#watcher === watcher) this.#watcher = undefined;
        this.#schedule();
      });
      this.#watcher = watcher;
    } catch {
      // The directory does not exist yet; polling retries the watch.
    }
  }

  #schedule(): void {
    if (this.#closed || this.#debounce !== undefined) return;
    this.#debounce = setTimeout(() => {
      this.#debounce = undefined;
      void this.refresh();
    }, this.#debounceMs);
  }
}

/** The watcher of `options.dir`, started as the component "TLS material" of `lifecycle`. */
export function openTlsMaterial(
  lifecycle: Lifecycle,
  options: TlsMaterialWatcherOptions,
): Promise<TlsMaterialWatcher> {
  return lifecycle.open('TLS material', () => TlsMaterialWatcher.start(options), {
    close: (opened) => {
      opened.close();
    },
  });
}
