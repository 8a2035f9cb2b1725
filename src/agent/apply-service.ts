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
import { isUtf8 } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { type ApplyResponseBody, configFileName } from '../agent-api/api-types.ts';
import { type DesiredFile, digestOf } from '../agent-api/apply-request.ts';
import {
  type RuntimePlan,
  type ServerChange,
  rewriteServerSlots,
  rewrittenPlan,
  runtimePlan,
  slotLineFindings,
} from '../haproxy/runtime-changes.ts';
import { fileSetDigest } from '../agent-api/file-set-digest.ts';
import type { RuntimeChangeRequest } from '../agent-api/runtime-change-request.ts';
import { checkHAProxyConfig } from '../sandbox/check-client.ts';
import { inspectHaproxyConfig } from '../haproxy/config-lint.ts';
import {
  type FilesInspection,
  describeFindings,
  inspectConfigFiles,
} from '../haproxy/files-lint.ts';
import type { ConfigFileStore, PathConflict } from './file-store.ts';
import { type AppliedFile, type FilePlan, planFiles, planIsEmpty } from './file-plan.ts';
import { type ReloadOutcome, readProcessList, reloadHAProxy } from './haproxy-reload.ts';
import type { MasterSocket } from './master-socket.ts';
import type { ProcessList } from './process-list.ts';
import { updateServers } from './runtime-update.ts';
import { type AgentFailure, type AgentReason, agentReasons } from '../agent-api/reasons.ts';
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

export type ApplyOutcome =
  ({ readonly ok: true } & ApplyResponseBody) | ({ readonly ok: false } & AgentFailure);

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** The state file's record of `files`. */
function appliedFiles(files: readonly DesiredFile[]): AppliedFile[] {
  return files.map((file) => ({
    path: file.path,
    digest: file.digest,
    size: file.content.byteLength,
  }));
}

function failure(outcome: AgentFailure): ApplyOutcome {
  return { ok: false, ...outcome };
}

/** Most paths a conflict answer lists. @default 3 */
const listedPaths = 3;

function listed(paths: readonly string[]): string {
  const more = paths.length - listedPaths;
  return `${paths.slice(0, listedPaths).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** The 400 answer for a write that would change what a path is on disk. */
function conflictFailure(conflict: PathConflict, files: readonly DesiredFile[]): AgentFailure {
  const field = `files[${files.findIndex((file) => file.path === conflict.path)}].path`;
  const what =
    conflict.kind === 'directory'
      ? `${field} "${conflict.path}" is a directory on the agent holding ${listed(conflict.holding)}: a file cannot replace a directory in one apply. ` +
        `Apply the set without the files under ${conflict.path} first (the agent then removes the directory), then this one; or give the file another path.`
      : `${field} "${conflict.path}" lies under "${conflict.file}", which is a file on the agent: a directory cannot replace a file in one apply. ` +
        `Apply the set without ${conflict.file} first, then this one; or give the files another path.`;
  return {
    reason: agentReasons.PathInvalid,
    code: 'PathConflict',
    field,
    message: `${what} Nothing was changed.`,
  };
}

export class ApplyService {
  readonly #options: ApplyServiceOptions;
  #state: AppliedState;
  /** The applied haproxy.cfg's text, kept from the last apply (none yet after a start). */
  #appliedConfig: { readonly digest: string; readonly text: string } | undefined;
  /** The apply in progress; the next one waits for it. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: ApplyServiceOptions) {
    this.#options = options;
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
    const { store } = this.#options;
    const held = this.#state.files;
    const base = fileSetDigest(held);
    const applied = held.find((file) => file.path === configFileName);
    if (base !== request.baseDigest || applied === undefined) {
      return this.#runtimeRefused(
        agentReasons.RuntimeBaseMismatch,
        'baseDigest',
        `baseDigest ${request.baseDigest} is not the set this agent holds (${applied === undefined ? 'none' : base}, generation ${this.#state.generation}); send the complete set with POST /v1/apply.`,
      );
    }
    const text = await this.#appliedConfigText();
    if (text === undefined) {
      return this.#runtimeRefused(
        agentReasons.RuntimeBaseMismatch,
        'baseDigest',
        `${configFileName} on disk is not the applied one (changed outside the agent); send the complete set with POST /v1/apply.`,
      );
    }
    const rewritten = rewriteServerSlots(text, request.changes);
    if (rewritten === undefined) {
      return this.#runtimeRefused(
        agentReasons.RuntimeNotExpressible,
        'changes',
        `changes name a server that is not one server line of a backend or listen section of ${configFileName}; send the complete set with POST /v1/apply.`,
      );
    }
    const content = Buffer.from(rewritten.config);
    const written: DesiredFile = { path: configFileName, digest: digestOf(content), content };
    const files = held.map((file) =>
      file.path === configFileName
        ? { path: file.path, digest: written.digest, size: content.byteLength }
        : file,
    );
    const result = fileSetDigest(files);
    if (result !== request.resultDigest) {
      return this.#runtimeRefused(
        agentReasons.RuntimeResultMismatch,
        'resultDigest',
        `changes applied to this agent's files give the set ${result}, not resultDigest ${request.resultDigest}; send the complete set with POST /v1/apply.`,
      );
    }
    const plan = rewrittenPlan(held, files, rewritten);
    if (!plan.runtime) {
      return this.#runtimeRefused(
        agentReasons.RuntimeNotExpressible,
        'changes',
        `changes need a reload (${plan.reason}); send the complete set with POST /v1/apply.`,
      );
    }
    if (plan.changes.length === 0) {
      return {
        ok: true,
        changed: false,
        reloaded: false,
        generation: this.#state.generation,
        configDigest: written.digest,
        durationMs: performance.now() - started,
      };
    }
    const findings = slotLineFindings(plan.lines);
    if (findings.length > 0) return this.#refused(findings);
    const writes: FilePlan = { writes: [written], removals: [] };
    const outcome = await this.#applyAtRuntime(writes, files, plan.changes, started);
    if (outcome !== undefined) return outcome;
    // HAProxy did not take it: the complete set (the other files as they are on disk) reloads.
    const complete = await Promise.all(
      held.map(async (file): Promise<DesiredFile> => {
        if (file.path === configFileName) return written;
        const bytes = await readFile(store.live(file.path));
        return { path: file.path, digest: digestOf(bytes), content: bytes };
      }),
    );
    return this.#applyWithReload(complete, writes, undefined, started);
  }

  /** A runtime change refused with nothing changed (409). */
  #runtimeRefused(reason: AgentReason, field: string, message: string): ApplyOutcome {
    const full = `${message} Nothing was changed.`;
    this.#options.logger.warn({ reason, field }, `runtime change refused: ${full}`);
    return failure({ reason, code: reason, field, message: full });
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
    const read = (path: string): string | undefined =>
      files.find((file) => file.path === path)?.content.toString('utf8');
    const plan = planFiles(this.#state.files, files);
    const runtime = planIsEmpty(plan) ? undefined : await this.#runtimePlan(files, config);
    // A slot-only change needs only its changed lines linted: every other line is the
    // applied set's, linted when it was applied.
    const inspection = runtime?.runtime === true ? undefined : inspectConfigFiles(read);
    const findings =
      runtime?.runtime === true ? slotLineFindings(runtime.lines) : (inspection?.findings ?? []);
    if (findings.length > 0) return this.#refused(findings);
    if (planIsEmpty(plan)) {
      return {
        ok: true,
        changed: false,
        reloaded: false,
        generation: this.#state.generation,
        configDigest: config.digest,
        durationMs: performance.now() - started,
      };
    }
    const { store } = this.#options;
    const [conflict] = await store.conflicts(plan.writes);
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
    if (typeof reachable === 'string') {
      return failure({
        reason: agentReasons.HAProxyUnavailable,
        code: agentReasons.HAProxyUnavailable,
        message: `${reachable} Nothing was changed.`,
      });
    }
    const configDigest = files.find((file) => file.path === configFileName)?.digest ?? '';
    const read = (path: string): string | undefined =>
      files.find((file) => file.path === path)?.content.toString('utf8');
    let inspection = linted;
    if (inspection === undefined) {
      // Falling back from a runtime update: a reload loads every line, so every line is linted.
      inspection = inspectConfigFiles(read);
      if (inspection.findings.length > 0) return this.#refused(inspection.findings);
    }
    // haproxy -c in the Pod's sandbox before HAProxy itself sees the files: whatever the lint
    // missed finds nothing there (another uid, no mounts of this container), and a set HAProxy
    // would reject never reaches a reload.
    const check = await checkHAProxyConfig(files, { socket: this.#options.checkSocket });
    if (!check.ok) {
      const rejected = check.failure === 'rejected';
      const reason = rejected ? agentReasons.ConfigRejected : agentReasons.CheckUnavailable;
      const message = rejected
        ? `haproxy -c rejects the configuration; HAProxy keeps serving the previous one: ${check.message}`
        : `${check.message} Nothing was changed.`;
      logger.warn({ failure: check.failure }, message);
      return failure({
        reason,
        code: reason,
        message,
        ...(rejected ? { haproxyMessage: check.message } : {}),
      });
    }
    const checked = performance.now();
    await this.#putInPlace(plan);
    const written = performance.now();
    logger.info(
      { writes: plan.writes.length, removals: plan.removals.length },
      'files in place, reloading HAProxy',
    );
    const reload = await this.#reload(inspection.backends, reachable);
    if (!reload.ok) return this.#rollBack(plan, reload);
    const reloaded = performance.now();
    const next = this.#nextState(appliedFiles(files));
    await this.#record(
      next,
      files.find((file) => file.path === configFileName),
    );
    const durationMs = performance.now() - started;
    logger.info(
      {
        generation: next.generation,
        configDigest,
        writes: plan.writes.length,
        removals: plan.removals.length,
        workerPid: reload.workerPid,
        durationMs: Math.round(durationMs),
        phasesMs: {
          check: round(checked - started),
          write: round(written - checked),
          reload: round(reload.reloadMs),
          verify: round(reload.verifyMs),
          record: round(performance.now() - reloaded),
        },
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
      workerPid: reload.workerPid,
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
    const message = `The configuration is refused: ${describeFindings(findings)}`;
    this.#options.logger.warn({ findings: findings.length }, message);
    return failure({
      reason: agentReasons.ConfigForbidden,
      code: agentReasons.ConfigForbidden,
      field: 'files',
      message,
    });
  }

  /**
   * The applied haproxy.cfg's text: kept from the last apply, or read from disk once after a
   * start; undefined when nothing was applied or the file on disk is not the applied one.
   */
  async #appliedConfigText(): Promise<string | undefined> {
    const applied = this.#state.files.find((file) => file.path === configFileName);
    if (applied === undefined) return undefined;
    if (this.#appliedConfig?.digest === applied.digest) return this.#appliedConfig.text;
    const text = await readFile(this.#options.store.live(configFileName), 'utf8').catch(() => '');
    if (digestOf(Buffer.from(text)) !== applied.digest) return undefined;
    this.#appliedConfig = { digest: applied.digest, text };
    return text;
  }

  /** Records a successful apply: the state file, the journal's end, the state and config kept. */
  async #record(next: AppliedState, config: DesiredFile | undefined): Promise<void> {
    await writeStateFile(this.#options.stateFile, next);
    await this.#options.store.commit();
    this.#state = next;
    // Kept only as text that reads back to the same bytes: see #runtimePlan.
    this.#appliedConfig =
      config === undefined || !isUtf8(config.content)
        ? undefined
        : { digest: config.digest, text: config.content.toString('utf8') };
  }

  /** Whether `files` differ from the applied set only in server slots (runtime-changes.ts). */
  async #runtimePlan(files: readonly DesiredFile[], config: DesiredFile): Promise<RuntimePlan> {
    if (this.#state.files.every((file) => file.path !== configFileName)) {
      return { runtime: false, reason: 'nothing was applied before' };
    }
    // Lines are compared as text: bytes that are not UTF-8 all read as U+FFFD, so two files
    // differing only there would compare equal and be written without the lint, haproxy -c or
    // a reload. Such a file reloads; the applied one, kept as text only when it is UTF-8, is
    // otherwise read back from disk, where its digest no longer matches (a reload too).
    if (!isUtf8(config.content)) {
      return { runtime: false, reason: `${configFileName} is not UTF-8 text` };
    }
    const text = await this.#appliedConfigText();
    if (text === undefined) {
      return { runtime: false, reason: `${configFileName} on disk is not the applied one` };
    }
    return runtimePlan(
      { files: this.#state.files, config: text },
      { files, config: config.content.toString('utf8') },
    );
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
      const restored = await readFile(store.live(configFileName), 'utf8').catch(() => '');
      await this.#reload(inspectHaproxyConfig(restored).backends);
      throw unwritten;
    }
    if (problem !== undefined) {
      logger.warn(
        { changes: changes.length },
        `the runtime update failed (${problem}); reloading instead`,
      );
      await store.rollback();
      const restored = await readFile(store.live(configFileName), 'utf8').catch(() => '');
      await this.#reload(inspectHaproxyConfig(restored).backends);
      return undefined;
    }
    const next = this.#nextState(files);
    await this.#record(
      next,
      plan.writes.find((file) => file.path === configFileName),
    );
    const durationMs = performance.now() - started;
    const configDigest = files.find((file) => file.path === configFileName)?.digest ?? '';
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

  /** Reloads HAProxy with what is on disk now; the new worker must run `backends`. */
  async #reload(backends: readonly string[], before?: ProcessList): Promise<ReloadOutcome> {
    const { master, reloadTimeoutMs } = this.#options;
    return reloadHAProxy(master, {
      expectedBackends: backends,
      ...(before === undefined ? {} : { before }),
      ...(reloadTimeoutMs === undefined ? {} : { timeoutMs: reloadTimeoutMs }),
    });
  }

  async #rollBack(
    plan: FilePlan,
    reload: Extract<ReloadOutcome, { ok: false }>,
  ): Promise<ApplyOutcome> {
    const { store, logger } = this.#options;
    // The sandbox accepted these files before the reload, so HAProxy failed at run time.
    const haproxyMessage =
      reload.failure === 'rejected'
        ? 'haproxy -c accepts the configuration, but HAProxy could not start it (for example an address in use or a file it cannot read); see the HAProxy log.'
        : undefined;
    await store.rollback();
    const restoredConfig = await readFile(store.live(configFileName), 'utf8').catch(() => '');
    const restored = await this.#reload(inspectHaproxyConfig(restoredConfig).backends);
    const summary =
      reload.failure === 'rejected'
        ? `HAProxy rejected the configuration and keeps serving the previous one: ${haproxyMessage ?? reload.message}`
        : reload.message;
    logger.error(
      {
        writes: plan.writes.length,
        removals: plan.removals.length,
        restored: restored.ok,
        failure: reload.failure,
      },
      summary,
    );
    if (!restored.ok) {
      return failure({
        reason: agentReasons.RollbackFailed,
        code: agentReasons.RollbackFailed,
        message: `${summary} Restoring the last-known-good configuration failed too: ${restored.message}`,
        ...(haproxyMessage === undefined ? {} : { haproxyMessage }),
      });
    }
    const reason =
      reload.failure === 'rejected' ? agentReasons.ConfigRejected : agentReasons.HAProxyUnavailable;
    return failure({
      reason,
      code: reason,
      message: summary,
      ...(haproxyMessage === undefined ? {} : { haproxyMessage }),
    });
  }
}
