/**
 * The applied haproxy.cfg's text, which the next set is compared with for a change of server
 * slots alone (runtime-changes.ts): kept from the last apply, or read back from disk once after
 * a start, and kept only as text that reads back to the same bytes.
 */
import { isUtf8 } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { configFileName } from '../agent-api/api-types.ts';
import { type DesiredFile, digestOf } from '../agent-api/apply-request.ts';
import { type RuntimePlan, runtimePlan } from '../haproxy/runtime-changes.ts';
import type { AppliedFile } from './file-plan.ts';

export class AppliedConfig {
  /** Where the applied haproxy.cfg is on disk. */
  readonly #path: string;
  #kept: { readonly digest: string; readonly text: string } | undefined;

  constructor(path: string) {
    this.#path = path;
  }

  /**
   * The text of the haproxy.cfg among `applied`; undefined when there is none or the file on
   * disk is not the applied one.
   */
  async text(applied: readonly AppliedFile[]): Promise<string | undefined> {
    const config = applied.find((file) => file.path === configFileName);
    if (config === undefined) return undefined;
    if (this.#kept?.digest === config.digest) return this.#kept.text;
    const text = await readFile(this.#path, 'utf8').catch(() => '');
    if (digestOf(Buffer.from(text)) !== config.digest) return undefined;
    this.#kept = { digest: config.digest, text };
    return text;
  }

  /**
   * Whether `files`, whose haproxy.cfg is `config`, differ from the `applied` set only in
   * server slots (runtime-changes.ts).
   */
  async runtimePlan(
    applied: readonly AppliedFile[],
    files: readonly DesiredFile[],
    config: DesiredFile,
  ): Promise<RuntimePlan> {
    if (applied.every((file) => file.path !== configFileName)) {
      return { runtime: false, reason: 'nothing was applied before' };
    }
    // Lines are compared as text: bytes that are not UTF-8 all read as U+FFFD, so two files
    // differing only there would compare equal and be written without the lint, haproxy -c or
    // a reload. Such a file reloads; the applied one, kept as text only when it is UTF-8, is
    // otherwise read back from disk, where its digest no longer matches (a reload too).
    if (!isUtf8(config.content)) {
      return { runtime: false, reason: `${configFileName} is not UTF-8 text` };
    }
    const text = await this.text(applied);
    if (text === undefined) {
      return { runtime: false, reason: `${configFileName} on disk is not the applied one` };
    }
    return runtimePlan(
      { files: applied, config: text },
      { files, config: config.content.toString('utf8') },
    );
  }

  /** Keeps the text of the haproxy.cfg just applied (none when it is not UTF-8). */
  keep(config: DesiredFile | undefined): void {
    this.#kept =
      config === undefined || !isUtf8(config.content)
        ? undefined
        : { digest: config.digest, text: config.content.toString('utf8') };
  }
}
