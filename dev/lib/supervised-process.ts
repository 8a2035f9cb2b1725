import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';

export interface SupervisedProcess {
  readonly name: string;
  readonly pid: number;
  /** Resolves when the process has exited (after stop() or by itself). */
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Kill the process when this PID disappears (the test run that owns it). A watchdog shell
   * polls the owner twice a second, so a crashed or SIGKILLed test run leaks nothing.
   * Omit to leave the process running on its own (`make cluster-up`).
   * @default process.pid
   */
  readonly ownerPid?: number | null;
}

// The watchdog: runs the command, and stops it when the owner disappears or on TERM/INT:
// SIGTERM, then SIGKILL after 5 s (kube-apiserver can hang in shutdown once etcd is gone).
const watchdog = `
owner=$1; shift
"$@" &
child=$!
finish() {
  kill -TERM $child 2>/dev/null
  for _ in $(seq 50); do kill -0 $child 2>/dev/null || break; sleep 0.1; done
  kill -KILL $child 2>/dev/null
  wait $child
  exit
}
trap finish TERM INT
while kill -0 "$owner" 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 0.5; done
finish
`;

export function startSupervised(options: StartOptions): SupervisedProcess {
  const owner = options.ownerPid === undefined ? process.pid : options.ownerPid;
  const log = openSync(options.logFile, 'a');
  const [command, args] =
    owner === null
      ? [options.command, options.args]
      : ['bash', ['-c', watchdog, 'watchdog', String(owner), options.command, ...options.args]];
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      stdio: ['ignore', log, log],
      env: options.env ?? process.env,
      // Its own process group, so stop() reaches the watchdog and the command together.
      detached: true,
    });
  } finally {
    closeSync(log);
  }
  const { pid } = child;
  if (pid === undefined) throw new Error(`${options.name} did not start (${options.command})`);
  if (owner === null) child.unref();
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
  });
  return {
    name: options.name,
    pid,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup(pid, 'SIGTERM');
      const timeout = setTimeout(() => {
        killGroup(pid, 'SIGKILL');
      }, 10_000);
      await exited;
      clearTimeout(timeout);
    },
  };
}

/** Signals a process group (0 only probes it); a group already gone is not an error. */
export function killGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}
