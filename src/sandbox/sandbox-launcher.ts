/**
 * Starting the check sandbox (`haptic sandbox serve`) as a child process on a socket of its
 * own, as the chart's config-check container runs beside the controller: PATH is its only
 * environment and, when this process is root, the sandbox becomes 65534:65534 after binding
 * its socket, so it cannot read what root keeps private. Resolves once the sandbox answers
 * its health check. `haptic config check` starts one per run (without --check-socket); local
 * runs, tests and benchmarks start theirs through dev/lib/local-sandbox.ts, which passes a
 * spawner that supervises the process so it dies with the run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { HapticError, errorCodes } from '../errors.ts';
import { probeSandbox } from './check-client.ts';

/** The user the sandbox becomes when started by root. */
export const sandboxUserUnderRoot = { uid: 65534, gid: 65534 } as const;

/** The started process, however it is run. */
export interface SandboxChild {
  /** Settles (never rejects) when the process has ended. */
  readonly exited: Promise<unknown>;
  /** Ends the process and waits for it. */
  stop(): Promise<void>;
  /** Its output, or where to read it: for the message when it does not start. */
  output(): Promise<string>;
}

/** Runs `command` with `args` and `env` as its whole environment. */
export type SandboxSpawner = (
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
) => SandboxChild;

export interface LaunchSandboxOptions {
  readonly socket: string;
  /** The haptic entry point that gets `sandbox serve`. @default this process's (process.argv[1]) */
  readonly main?: string;
  /** Node's flags for it. @default this process's (process.execArgv) */
  readonly execArgv?: readonly string[];
  /** More `haptic sandbox serve` flags, e.g. `--time-limit=2`. */
  readonly extraArgs?: readonly string[];
  /** @default a child process whose output is kept for the start-failure message */
  readonly spawn?: SandboxSpawner;
}

export interface LaunchedSandbox {
  readonly socket: string;
  stop(): Promise<void>;
}

/** How long the sandbox may take to answer its first health check. */
const startTimeoutMs = 20_000;

/** A plain child process; its output is read when it has ended. */
const spawnChild: SandboxSpawner = (command, args, env) => {
  const child = execa(command, args, {
    env,
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    all: true,
  });
  return {
    exited: child.then(() => undefined),
    stop: async () => {
      child.kill('SIGTERM');
      await child;
    },
    output: async () => (await child).all.trim(),
  };
};

export async function launchSandbox(options: LaunchSandboxOptions): Promise<LaunchedSandbox> {
  const { uid, gid } = sandboxUserUnderRoot;
  const asRoot = process.getuid?.() === 0;
  const child = (options.spawn ?? spawnChild)(
    process.execPath,
    [
      ...(options.execArgv ?? process.execArgv),
      options.main ?? process.argv[1] ?? '',
      'sandbox',
      'serve',
      `--socket=${options.socket}`,
      ...(asRoot ? [`--user=${String(uid)}:${String(gid)}`] : []),
      ...(options.extraArgs ?? []),
    ],
    { PATH: process.env.PATH ?? '' },
  );
  const life = { ended: false };
  void child.exited.then(() => {
    life.ended = true;
  });
  const deadline = performance.now() + startTimeoutMs;
  let problem = await probeSandbox(options.socket, 1_000);
  while (problem !== undefined && !life.ended && performance.now() < deadline) {
    await sleep(50);
    problem = await probeSandbox(options.socket, 1_000);
  }
  if (problem !== undefined) {
    await child.stop();
    throw new HapticError(
      errorCodes.SANDBOX_START_FAILED,
      `The check sandbox did not start (${problem}): ${await child.output()}`,
    );
  }
  return { socket: options.socket, stop: () => child.stop() };
}
