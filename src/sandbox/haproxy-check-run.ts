/**
 * One `haproxy -c` inside the sandbox: cut off from the network (network-isolation.ts), then
 * `prlimit` (address space, CPU, no new processes, file size, no core) around
 * `haproxy -c -C <config> -f <config>/haproxy.cfg`, an environment of
 * PATH, HOME and TMPDIR only (the latter two a scratch directory of this check), no stdin, its
 * own process group killed with SIGKILL at the time limit and again when it ends (nothing it
 * started outlives it), and output read up to a bound and reduced (haproxy/message.ts) before
 * it leaves the sandbox.
 */
import { execa } from 'execa';
import { configFileName } from '../agent-api/api-types.ts';
import { reduceHaproxyMessage } from '../haproxy/message.ts';
import { isolationFailed } from './network-isolation.ts';
import type { CheckOutcome } from './sandbox-protocol.ts';
import { type SandboxLimits, mebibytes, prlimitArgs } from './sandbox-limits.ts';

/** The PATH of the check: system directories only. */
export const checkPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Output read from one check; more ends the check. */
const maxOutputBytes = 1024 * 1024;

/** Output sent back: HAProxy's first lines are the ones that matter. */
const maxAnswerChars = 64 * 1024;

export interface CheckRun {
  /** Directory with haproxy.cfg and the files it names (`-C`). */
  readonly configDir: string;
  /** HOME, TMPDIR and working directory of the check. */
  readonly scratchDir: string;
  readonly haproxyBinary: string;
  readonly limits: SandboxLimits;
  /** The command line that runs the check without network (network-isolation.ts). */
  readonly isolation: readonly string[];
  /**
   * The text of haproxy.cfg, to read keywords from when HAProxy's output is reduced; read only
   * for a check that fails (a passing check's output is not sent).
   */
  readonly config: () => string;
  /** Aborted when the caller is gone: the check is killed. */
  readonly signal?: AbortSignal;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
}

function bounded(output: string): string {
  return output.length > maxAnswerChars ? `${output.slice(0, maxAnswerChars)}…` : output;
}

/** What this module reads of a finished `haproxy -c` (execa's result). */
interface FinishedCheck {
  /** stdout and stderr, interleaved. */
  readonly all: string;
  readonly isCanceled: boolean;
  readonly timedOut: boolean;
  readonly isMaxBuffer: boolean;
  readonly signal?: string | undefined;
  readonly exitCode?: number | undefined;
  readonly shortMessage?: string | undefined;
}

function unavailable(message: string): CheckOutcome {
  return { ok: false, failure: 'unavailable', message };
}

export async function runHAProxyCheck(run: CheckRun): Promise<CheckOutcome> {
  const { limits } = run;
  const [isolation, ...isolationArgs] = run.isolation;
  if (isolation === undefined) {
    return unavailable(
      'haproxy -c was not run: the check sandbox has no network isolation for it.',
    );
  }
  const subprocess = execa(
    isolation,
    [
      ...isolationArgs,
      'prlimit',
      ...prlimitArgs(limits),
      '--',
      run.haproxyBinary,
      '-c',
      '-C',
      run.configDir,
      '-f',
      `${run.configDir}/${configFileName}`,
    ],
    {
      cwd: run.scratchDir,
      env: { PATH: checkPath, HOME: run.scratchDir, TMPDIR: run.scratchDir },
      extendEnv: false,
      stdin: 'ignore',
      all: true,
      reject: false,
      detached: true,
      timeout: limits.timeMs,
      killSignal: 'SIGKILL',
      ...(run.signal === undefined ? {} : { cancelSignal: run.signal }),
      maxBuffer: maxOutputBytes,
    },
  );
  const result = await subprocess;
  killGroup(subprocess.pid);
  return outcomeOf(result, run, isolation);
}

/** Why the check was stopped before HAProxy finished, if it was. */
function stopReason(result: FinishedCheck, limits: SandboxLimits): string | undefined {
  if (result.isCanceled) return 'haproxy -c was stopped: its caller is gone.';
  if (result.timedOut) {
    return `haproxy -c did not finish within ${limits.timeMs} ms and was stopped.`;
  }
  if (result.signal === 'SIGXCPU') {
    return `haproxy -c used more CPU time than its ${limits.timeMs} ms limit allows and was stopped.`;
  }
  if (result.signal === 'SIGKILL') {
    return 'haproxy -c was killed (SIGKILL), most likely because the check container ran out of memory; raise its memory limit or lower the concurrent checks.';
  }
  return undefined;
}

/**
 * Whether the check never reached HAProxy: prlimit missing (no exit code), prlimit unable to
 * start haproxy (126, 127), or the network isolation unable to start prlimit.
 */
function notStarted(result: FinishedCheck): boolean {
  return (
    result.exitCode === undefined ||
    ((result.exitCode === 126 || result.exitCode === 127) &&
      result.all.startsWith('prlimit: failed to execute')) ||
    isolationFailed(result.all)
  );
}

/**
 * Whether an allocation failed under RLIMIT_AS: the size of the configuration, not a line of
 * it, is what HAProxy refuses, though its alert may name the line it was reading. It says so in
 * several words ("out of memory", "failed to allocate …", "cannot allocate …"), or starts its
 * alert with "(null)" where even the message could not be allocated (HAProxy 2.6). Only
 * HAProxy's own alert lines count, never the configuration text they may quote.
 */
function outOfMemory(output: string): boolean {
  return output
    .split('\n')
    .some((line) =>
      /^\[ALERT\] +\(\d+\) : (\(null\)|.*(: out of memory\.?|failed to allocate .*|cannot allocate .*)$)/i.test(
        line,
      ),
    );
}

function outcomeOf(result: FinishedCheck, run: CheckRun, isolation: string): CheckOutcome {
  const { limits } = run;
  const stopped = stopReason(result, limits);
  if (stopped !== undefined) return unavailable(stopped);
  // HAProxy's output may quote what it read (a line of a `-f` file, a map entry): it leaves
  // the sandbox reduced to file:line, keyword and a fixed reason, never as written.
  const output = (): string =>
    bounded(
      reduceHaproxyMessage(result.all.replaceAll(`${run.configDir}/`, ''), {
        config: run.config(),
      }),
    );
  if (result.isMaxBuffer) {
    return {
      ok: false,
      failure: 'rejected',
      message: `${output()}\nhaproxy -c wrote more than ${maxOutputBytes} bytes of messages and was stopped.`,
    };
  }
  if (result.signal !== undefined) {
    return {
      ok: false,
      failure: 'rejected',
      message:
        `haproxy -c ended with ${result.signal} (within a ${mebibytes(limits.memoryBytes)} MiB memory limit). ${output()}`.trim(),
    };
  }
  if (result.exitCode === 0) return { ok: true };
  if (notStarted(result)) {
    return unavailable(
      `haproxy -c could not run (prlimit from util-linux and ${run.haproxyBinary} must be installed, and ${isolation} must work): ${result.exitCode === undefined ? result.shortMessage : (result.all.split('\n')[0] ?? '')}`,
    );
  }
  return {
    ok: false,
    failure: 'rejected',
    message: output(),
    ...(outOfMemory(result.all) ? { exhausted: 'memory' as const } : {}),
  };
}
