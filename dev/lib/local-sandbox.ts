/**
 * The check sandbox (`haptic sandbox serve`, started by src/sandbox/sandbox-launcher.ts as
 * `haptic config check` starts it) as a local process beside tests and benchmarks, run from
 * the sources and supervised: it dies with the run that started it, its output goes to a log.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchSandbox } from '../../src/sandbox/sandbox-launcher.ts';
import { startSupervised } from './supervised-process.ts';
import { projectRoot } from './tools.ts';

export interface LocalSandbox {
  readonly socket: string;
  readonly logFile: string;
  stop(): Promise<void>;
}

export interface LocalSandboxOptions {
  /** Directory of the socket and the log. */
  readonly dir: string;
  /** More `haptic sandbox serve` flags, e.g. `--time-limit=2`. */
  readonly extraArgs?: readonly string[];
}

export async function startLocalSandbox(options: LocalSandboxOptions): Promise<LocalSandbox> {
  mkdirSync(options.dir, { recursive: true });
  const logFile = join(options.dir, 'sandbox.log');
  const sandbox = await launchSandbox({
    socket: join(options.dir, 'check.sock'),
    main: join(projectRoot, 'src/cli/main.ts'),
    execArgv: [],
    ...(options.extraArgs === undefined ? {} : { extraArgs: options.extraArgs }),
    spawn: (command, args, env) => {
      const supervised = startSupervised({ name: 'check sandbox', command, args, env, logFile });
      return {
        exited: supervised.exited,
        stop: () => supervised.stop(),
        output: () => Promise.resolve(`see ${logFile}`),
      };
    },
  });
  return { socket: sandbox.socket, logFile, stop: () => sandbox.stop() };
}
