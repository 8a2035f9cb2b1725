/**
 * Applying a set of files to HAProxy, one apply at a time:
 *
 *   plan against the last applied set → lint haproxy.cfg (unchanged: done, no reload)
 *   → only server slots changed (runtime-changes.ts; only those lines are linted): change
 *     the slots through the runtime API while the files are written, verify, record the
 *     state — no check, no reload. `applyRuntimeChange` takes the same path from the slots
 *     alone and the digests of the base and result sets (`POST /v1/runtime-change`)
 *   → otherwise: sandboxed haproxy -c → stage → keep last-known-good → rename into place
 *     (haproxy.cfg last) → reload through the master socket → verify the new worker runs
 *     the new backends → record the state.
 *
 * On failure the last-known-good files go back and HAProxy is reloaded with them; its old
 * workers serve throughout. When HAProxy refused the configuration, the check sandbox runs
 * `haproxy -c` on the rejected set (never this process) for HAProxy's own message.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { configFileName } from '../agent-api/api-types.ts';
import { type DesiredFile, digestOf } from '../agent-api/apply-request.ts';
import { agentReasons } from '../agent-api/reasons.ts';
import type { RuntimeChangeRequest } from '../agent-api/runtime-change-request.ts';
import { type FilesInspection, inspectConfigFiles } from '../haproxy/files-lint.ts';
import { type ServerChange, slotLineFindings } from '../haproxy/runtime-changes.ts';
import { checkHAProxyConfig } from '../sandbox/check-client.ts';
import { AppliedConfig } from './applied-config.ts';
import {
  type ApplyOutcome,
  appliedFiles,
  checkFailure,
  configDigestOf,
  conflictFailure,
  failure,
  lintRefusal,
  round,
  unchanged,
  unreachableFailure,
} from './apply-outcome.ts';
import { ConfigReloader } from './config-reloader.ts';
import { type AppliedFile, type FilePlan, planFiles, planIsEmpty } from './file-plan.ts';
import type { ConfigFileStore } from './file-store.ts';
import { readProcessList } from './haproxy-reload.ts';
import type { MasterSocket } from './master-socket.ts';
import { type RuntimeChangeRefusal, baseRefusal, fitRuntimeChange } from './runtime-change-fit.ts';
import { updateServers } from './runtime-update.ts';
import { type AppliedState, writeStateFile } from './state-file.ts';

export interface ApplyServiceOptions {
  readonly store: ConfigFileStore;
  readonly master: MasterSocket;
  readonly stateFile: string;
  readonly initialState: AppliedState;
  readonly logger: Logger;
  /** The check sandbox's socket, for HAProxy's message on a rejected configuration. */
  readonly checkSocket: string;
  /** Longest wait for a reload. @default 60 seconds */
  readonly reloadTimeoutMs?: number;
  /** The clock. @default Date.now */
  readonly now?: () => Date;
}

export class ApplyService {
  readonly #options: ApplyServiceOptions;
  readonly #reloader: ConfigReloader;
  readonly #appliedConfig: AppliedConfig;
  #state: AppliedState;
  /** The apply in progress; the next one waits for it. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: ApplyServiceOptions) {
    this.#options = options;
    this.#reloader = new ConfigReloader(options);
    this.#appliedConfig = new AppliedConfig(options.store.live(configFileName));
    this.#state = options.initialState;
  }

  state(): AppliedState {
    return this.#state;
  }

  /** Applies the complete set of files (serialised with any other apply). */
  async apply(files: readonly DesiredFile[]): Promise<ApplyOutcome> {
    const run = this.#queue.then(() => this.#apply(files));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Applies a runtime change (serialised with every apply): the applied haproxy.cfg with the
   * request's slots rewritten, when the applied set is the request's base and the result is
   * the set it names. Refused with nothing changed otherwise; applied like a runtime change of
   * `apply` (same lint, files, commands, read-back, reload fallback and state) when it fits.
   */
  async applyRuntimeChange(request: RuntimeChangeRequest): Promise<ApplyOutcome> {
    const run = this.#queue.then(() => this.#applyRuntimeChange(request));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #applyRuntimeChange(request: RuntimeChangeRequest): Promise<ApplyOutcome> {
    const started = performance.now();
    const fit =
      baseRefusal(request, this.#state) ??
      fitRuntimeChange(
        request,
        this.#state.files,
        await this.#appliedConfig.text(this.#state.files),
      );
    if (!fit.ok) return this.#runtimeRefused(fit);
    const { written, files, plan } = fit;
    if (plan.changes.length === 0) {
      return unchanged(this.#state.generation, written.digest, started);
    }
    const findings = slotLineFindings(plan.lines);
    if (findings.length > 0) return this.#refused(findings);
    const writes: FilePlan = { writes: [written], removals: [] };
    const outcome = await this.#applyAtRuntime(writes, files, plan.changes, started);
    if (outcome !== undefined) return outcome;
    // HAProxy did not take it: the complete set (the other files as they are on disk) reloads.
    return this.#applyWithReload(await this.#heldWith(written), writes, undefined, started);
  }

  /** The held set as it is on disk, with `written` in place of haproxy.cfg. */
  async #heldWith(written: DesiredFile): Promise<DesiredFile[]> {
    const { store } = this.#options;
    return Promise.all(
      this.#state.files.map(async (file): Promise<DesiredFile> => {
        if (file.path === configFileName) return written;
        const bytes = await readFile(store.live(file.path));
        return { path: file.path, digest: digestOf(bytes), content: bytes };
      }),
    );
  }

  /** A runtime change refused with nothing changed (409). */
  #runtimeRefused(refusal: RuntimeChangeRefusal): ApplyOutcome {
    const { reason, field, message } = refusal;
    this.#options.logger.warn({ reason, field }, `runtime change refused: ${message}`);
    return failure({ reason, code: reason, field, message });
  }

  async #apply(files: readonly DesiredFile[]): Promise<ApplyOutcome> {
    const started = performance.now();
    const { logger } = this.#options;
    const config = files.find((file) => file.path === configFileName);
    if (config === undefined) {
      return failure({
        reason: agentReasons.RequestInvalid,
        code: agentReasons.RequestInvalid,
        field: 'files',
        message: `files must include ${configFileName}.`,
      });
    }
    const plan = planFiles(this.#state.files, files);
    const runtime = planIsEmpty(plan)
      ? undefined
      : await this.#appliedConfig.runtimePlan(this.#state.files, files, config);
    // A slot-only change needs only its changed lines linted: every other line is the
    // applied set's, linted when it was applied.
    const inspection = runtime?.runtime === true ? undefined : inspectConfigFiles(reader(files));
    const findings =
      runtime?.runtime === true ? slotLineFindings(runtime.lines) : (inspection?.findings ?? []);
    if (findings.length > 0) return this.#refused(findings);
    if (planIsEmpty(plan)) return unchanged(this.#state.generation, config.digest, started);
    const [conflict] = await this.#options.store.conflicts(plan.writes);
    if (conflict !== undefined) {
      const refused = conflictFailure(conflict, files);
      logger.warn({ path: conflict.path }, refused.message);
      return failure(refused);
    }
    if (runtime?.runtime === true) {
      const applied = await this.#applyAtRuntime(
        plan,
        appliedFiles(files),
        runtime.changes,
        started,
      );
      if (applied !== undefined) return applied;
    } else if (runtime !== undefined) {
      logger.debug({ reason: runtime.reason }, 'the change needs a reload');
    }
    return this.#applyWithReload(files, plan, inspection, started);
  }

  /**
   * The rest of an apply that needs a reload (or fell back from a runtime update): HAProxy's
   * process list (only a reload needs it: runtime changes go to `@1` without it), lint every
   * line unless `inspection` did, `haproxy -c` in the sandbox, files in place, reload, record.
   */
  async #applyWithReload(
    files: readonly DesiredFile[],
    plan: FilePlan,
    linted: FilesInspection | undefined,
    started: number,
  ): Promise<ApplyOutcome> {
    const { logger, master } = this.#options;
    const reachable = await readProcessList(master);
    if (typeof reachable === 'string') return failure(unreachableFailure(reachable));
    let inspection = linted;
    if (inspection === undefined) {
      // Falling back from a runtime update: a reload loads every line, so every line is linted.
      inspection = inspectConfigFiles(reader(files));
      if (inspection.findings.length > 0) return this.#refused(inspection.findings);
    }
    // haproxy -c in the Pod's sandbox before HAProxy itself sees the files: whatever the lint
    // missed finds nothing there (another uid, no mounts of this container), and a set HAProxy
    // would reject never reaches a reload.
    const check = await checkHAProxyConfig(files, { socket: this.#options.checkSocket });
    if (!check.ok) {
      const refused = checkFailure(check);
      logger.warn({ failure: check.failure }, refused.message);
      return failure(refused);
    }
    const checked = performance.now();
    await this.#putInPlace(plan);
    const written = performance.now();
    logger.info(
      { writes: plan.writes.length, removals: plan.removals.length },
      'files in place, reloading HAProxy',
    );
    const reload = await this.#reloader.reload(inspection.backends, reachable);
    if (!reload.ok) return failure(await this.#reloader.rollBack(plan, reload));
    const reloaded = performance.now();
    const next = this.#nextState(appliedFiles(files));
    await this.#record(
      next,
      files.find((file) => file.path === configFileName),
    );
    const phasesMs = {
      check: round(checked - started),
      write: round(written - checked),
      reload: round(reload.reloadMs),
      verify: round(reload.verifyMs),
      record: round(performance.now() - reloaded),
    };
    return this.#reloaded(next, files, plan, reload.workerPid, { started, phasesMs });
  }

  /** Logs and answers an apply that reloaded HAProxy. */
  #reloaded(
    next: AppliedState,
    files: readonly DesiredFile[],
    plan: FilePlan,
    workerPid: number,
    timing: { readonly started: number; readonly phasesMs: Readonly<Record<string, number>> },
  ): ApplyOutcome {
    const configDigest = configDigestOf(files);
    const durationMs = performance.now() - timing.started;
    this.#options.logger.info(
      {
        generation: next.generation,
        configDigest,
        writes: plan.writes.length,
        removals: plan.removals.length,
        workerPid,
        durationMs: Math.round(durationMs),
        phasesMs: timing.phasesMs,
      },
      'configuration applied',
    );
    return {
      ok: true,
      changed: true,
      reloaded: true,
      generation: next.generation,
      configDigest,
      durationMs,
      workerPid,
    };
  }

  /** Stages the plan's files and swaps them into place; a failure restores the last good set. */
  async #putInPlace(plan: FilePlan): Promise<void> {
    const { store } = this.#options;
    try {
      await store.put(plan);
    } catch (error) {
      await store.rollback();
      throw error;
    }
  }

  /** The answer for a set the lint refuses. */
  #refused(findings: FilesInspection['findings']): ApplyOutcome {
    const refused = lintRefusal(findings);
    this.#options.logger.warn({ findings: findings.length }, refused.message);
    return failure(refused);
  }

  /** Records a successful apply: the state file, the journal's end, the state and config kept. */
  async #record(next: AppliedState, config: DesiredFile | undefined): Promise<void> {
    await writeStateFile(this.#options.stateFile, next);
    await this.#options.store.commit();
    this.#state = next;
    this.#appliedConfig.keep(config);
  }

  /**
   * Writes the files, then changes the server slots on the running workers: no reload, no
   * `haproxy -c` (the set differs from the applied, checked one only in slot addresses and
   * states, which the lint has just checked). Returns undefined when HAProxy did not take
   * the change: the files go back, a reload resets HAProxy to them, and the caller applies
   * the set the ordinary way.
   */
  async #applyAtRuntime(
    plan: FilePlan,
    files: readonly AppliedFile[],
    changes: readonly ServerChange[],
    started: number,
  ): Promise<ApplyOutcome | undefined> {
    const { store, master, logger } = this.#options;
    const planned = performance.now();
    // The commands go out while the files are written: traffic follows after one round trip
    // to HAProxy, not after the writes; the answer waits for both.
    let written = planned;
    let updated = planned;
    const [problem, unwritten] = await Promise.all([
      updateServers(master, changes).finally(() => {
        updated = performance.now();
      }),
      this.#putInPlace(plan).then(
        () => {
          written = performance.now();
          return undefined;
        },
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      ),
    ]);
    if (unwritten !== undefined) {
      // The last good files are back; HAProxy may run the new slots: a reload realigns it.
      await this.#reloader.reloadRestored();
      throw unwritten;
    }
    if (problem !== undefined) {
      logger.warn(
        { changes: changes.length },
        `the runtime update failed (${problem}); reloading instead`,
      );
      await store.rollback();
      await this.#reloader.reloadRestored();
      return undefined;
    }
    const next = this.#nextState(files);
    await this.#record(
      next,
      plan.writes.find((file) => file.path === configFileName),
    );
    const durationMs = performance.now() - started;
    const configDigest = configDigestOf(files);
    logger.info(
      {
        generation: next.generation,
        configDigest,
        runtimeChanges: changes.length,
        durationMs: round(durationMs),
        phasesMs: {
          plan: round(planned - started),
          write: round(written - planned),
          runtime: round(updated - planned),
          record: round(performance.now() - Math.max(written, updated)),
        },
      },
      'configuration applied through the runtime API',
    );
    return {
      ok: true,
      changed: true,
      reloaded: false,
      runtimeChanges: changes.length,
      generation: next.generation,
      configDigest,
      durationMs,
    };
  }

  #nextState(files: readonly AppliedFile[]): AppliedState {
    return {
      generation: this.#state.generation + 1,
      appliedAt: (this.#options.now ?? (() => new Date()))(),
      files: [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    };
  }
}

/** Reads a file of the set as text (haproxy.cfg and the files it names, for the lint). */
function reader(files: readonly DesiredFile[]): (path: string) => string | undefined {
  return (path) => files.find((file) => file.path === path)?.content.toString('utf8');
}
