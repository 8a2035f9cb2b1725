/**
 * Reloading HAProxy with the files on disk (haproxy-reload.ts: through the master socket, the
 * new worker verified), and going back to the last-known-good files when a reload fails: the
 * store restores them and HAProxy reloads with them, its old workers serving throughout.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { configFileName } from '../agent-api/api-types.ts';
import type { AgentFailure } from '../agent-api/reasons.ts';
import { inspectHaproxyConfig } from '../haproxy/config-lint.ts';
import { reloadFailure, reloadFailureSummary } from './apply-outcome.ts';
import type { FilePlan } from './file-plan.ts';
import type { ConfigFileStore } from './file-store.ts';
import { type ReloadOutcome, reloadHAProxy } from './haproxy-reload.ts';
import type { MasterSocket } from './master-socket.ts';
import type { ProcessList } from './process-list.ts';

export interface ConfigReloaderOptions {
  readonly store: ConfigFileStore;
  readonly master: MasterSocket;
  readonly logger: Logger;
  /** Longest wait for a reload. @default 60 seconds */
  readonly reloadTimeoutMs?: number;
}

export class ConfigReloader {
  readonly #options: ConfigReloaderOptions;

  constructor(options: ConfigReloaderOptions) {
    this.#options = options;
  }

  /** Reloads HAProxy with what is on disk now; the new worker must run `backends`. */
  async reload(backends: readonly string[], before?: ProcessList): Promise<ReloadOutcome> {
    const { master, reloadTimeoutMs } = this.#options;
    return reloadHAProxy(master, {
      expectedBackends: backends,
      ...(before === undefined ? {} : { before }),
      ...(reloadTimeoutMs === undefined ? {} : { timeoutMs: reloadTimeoutMs }),
    });
  }

  /** Reloads HAProxy with the last-known-good files, back on disk. */
  async reloadRestored(): Promise<ReloadOutcome> {
    const restored = await readFile(this.#options.store.live(configFileName), 'utf8').catch(
      () => '',
    );
    return this.reload(inspectHaproxyConfig(restored).backends);
  }

  /**
   * After the reload of `plan`'s files failed: the last-known-good files back in place and
   * HAProxy reloaded with them; the answer says what failed and whether the restore worked.
   */
  async rollBack(
    plan: FilePlan,
    reload: Extract<ReloadOutcome, { ok: false }>,
  ): Promise<AgentFailure> {
    await this.#options.store.rollback();
    const restored = await this.reloadRestored();
    this.#options.logger.error(
      {
        writes: plan.writes.length,
        removals: plan.removals.length,
        restored: restored.ok,
        failure: reload.failure,
      },
      reloadFailureSummary(reload),
    );
    return reloadFailure(reload, restored);
  }
}
