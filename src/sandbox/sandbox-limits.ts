/**
 * What one `haproxy -c` in the sandbox may use, and the `prlimit` arguments that enforce it
 * in the kernel (HAProxy cannot raise a hard limit): address space, CPU seconds, no new
 * processes or threads beyond its own (RLIMIT_NPROC 0 for a non-root user), bounded file
 * writes, no core dumps. Wall-clock time is enforced by the server (SIGKILL to the group).
 */
import { type ApplyLimits, defaultApplyLimits } from '../agent-api/apply-request.ts';

export interface SandboxLimits {
  /** Wall-clock time of one check, then SIGKILL. @default 30 seconds */
  readonly timeMs: number;
  /** Address space of one check (RLIMIT_AS). @default 512 MiB */
  readonly memoryBytes: number;
  /** Checks that run at once. @default 2 */
  readonly concurrent: number;
  /** Checks that may wait for a free slot; more are answered as busy. @default 16 */
  readonly waiting: number;
  /** Bounds of one request: those of an agent apply. */
  readonly request: ApplyLimits;
}

const mebibyte = 1024 * 1024;

export const defaultSandboxLimits: SandboxLimits = {
  timeMs: 30_000,
  memoryBytes: 512 * mebibyte,
  concurrent: 2,
  waiting: 16,
  request: defaultApplyLimits,
};

/** Largest file HAProxy (or code it was tricked into running) may write. */
const maxWrittenFileBytes = 16 * mebibyte;

/**
 * `prlimit` options in front of `-- haproxy ...`: hard limits equal the soft ones, except CPU,
 * where the soft limit sends SIGXCPU a second before the hard SIGKILL, so a CPU stop is told
 * apart from the kernel's out-of-memory kill.
 */
export function prlimitArgs(limits: SandboxLimits): readonly string[] {
  // A backstop behind the wall-clock limit, which stops a busy check first.
  const cpuSeconds = Math.ceil(limits.timeMs / 1000) + 1;
  return [
    `--as=${limits.memoryBytes}`,
    `--cpu=${cpuSeconds}:${cpuSeconds + 1}`,
    '--nproc=0',
    `--fsize=${maxWrittenFileBytes}`,
    '--core=0',
  ];
}

/** Memory in MiB, as messages and flags say it. */
export function mebibytes(bytes: number): number {
  return Math.round(bytes / mebibyte);
}
