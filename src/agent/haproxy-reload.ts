/**
 * Reloading HAProxy through its master socket and verifying the result: the master counts
 * the reload, reports no failure, and a new worker (a PID not seen before) runs; that worker
 * then lists every backend the new configuration declares. HAProxy 2.6's master CLI closes
 * `reload` without a status, so the outcome is read from `show proc`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describeError } from '../errors.ts';
import type { MasterSocket } from './master-socket.ts';
import { type ProcessList, parseProcessList } from './process-list.ts';

export interface ReloadOptions {
  /** Backends the new worker must run (from the applied haproxy.cfg). */
  readonly expectedBackends: readonly string[];
  /** @default 60 seconds */
  readonly timeoutMs?: number;
  /** @default 5 ms */
  readonly pollIntervalMs?: number;
  /** The process list just before the reload, if the caller has read it already. */
  readonly before?: ProcessList;
}

export type ReloadOutcome =
  | {
      readonly ok: true;
      readonly workerPid: number;
      /** From `reload` until the master lists the new worker. */
      readonly reloadMs: number;
      /** Until the new worker listed its backends. */
      readonly verifyMs: number;
    }
  | {
      readonly ok: false;
      /** `rejected`: HAProxy refused the configuration; `unavailable`: no answer in time. */
      readonly failure: 'rejected' | 'unavailable';
      readonly message: string;
    };

/** The master's process list, or a sentence saying why it is unavailable. */
export async function readProcessList(master: MasterSocket): Promise<ProcessList | string> {
  let output: string;
  try {
    output = await master.command('show proc');
  } catch (error) {
    return describeError(error);
  }
  return (
    parseProcessList(output) ??
    `HAProxy's master socket ${master.path} answered "show proc" with no master process: ${output.slice(0, 200)}`
  );
}

async function verifyBackends(
  master: MasterSocket,
  pid: number,
  expected: readonly string[],
): Promise<string | undefined> {
  let output: string;
  try {
    output = await master.command(`@!${pid} show backend`);
  } catch (error) {
    return `the new worker ${pid} did not list its backends: ${describeError(error)}`;
  }
  const running = new Set(
    output
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
  const missing = expected.filter((name) => !running.has(name));
  return missing.length === 0
    ? undefined
    : `the new worker ${pid} does not run the backends ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}`;
}

/** Reloads HAProxy and waits until a new worker runs the configuration now on disk. */
export async function reloadHAProxy(
  master: MasterSocket,
  options: ReloadOptions,
): Promise<ReloadOutcome> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? 60_000;
  const pollIntervalMs = options.pollIntervalMs ?? 5;
  const before = options.before ?? (await readProcessList(master));
  if (typeof before === 'string') return { ok: false, failure: 'unavailable', message: before };
  const known = new Set([...before.workers, ...before.oldWorkers].map((worker) => worker.pid));
  try {
    await master.command('reload');
  } catch (error) {
    return { ok: false, failure: 'unavailable', message: describeError(error) };
  }
  let last = '';
  while (performance.now() - started < timeoutMs) {
    const list = await readProcessList(master);
    if (typeof list === 'string') {
      // The master re-executes itself during a reload and may not answer for a moment.
      last = list;
    } else if (list.master.reloads > before.master.reloads) {
      if (list.master.failedReloads > 0) {
        return {
          ok: false,
          failure: 'rejected',
          message: 'HAProxy could not load the configuration; its previous workers keep serving.',
        };
      }
      const fresh = list.workers.find((worker) => !known.has(worker.pid));
      if (fresh !== undefined) {
        const listed = performance.now();
        const problem = await verifyBackends(master, fresh.pid, options.expectedBackends);
        if (problem !== undefined) return { ok: false, failure: 'rejected', message: problem };
        const verified = performance.now();
        return {
          ok: true,
          workerPid: fresh.pid,
          reloadMs: listed - started,
          verifyMs: verified - listed,
        };
      }
    }
    await sleep(pollIntervalMs);
  }
  return {
    ok: false,
    failure: 'unavailable',
    message: `HAProxy did not start a worker for the new configuration within ${timeoutMs} ms${last === '' ? '' : ` (${last})`}.`,
  };
}
