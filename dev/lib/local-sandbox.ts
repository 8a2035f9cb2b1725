/**
 * The check sandbox (`haptic sandbox serve`) as a local process beside tests and benchmarks,
 * as the chart's `config-check` container runs beside the controller and the agent: its own
 * process with PATH as its only environment, and, when this runner is root, the user 65534
 * (the program drops to it after binding its socket), so it cannot read what root keeps
 * private. Supervised: it dies with the run that started it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { probeSandbox } from '../../src/sandbox/check-client.ts';
import { type SupervisedProcess, startSupervised } from './supervised-process.ts';
import { projectRoot } from './tools.ts';

/** The unprivileged user local sandboxes run as when started by root. */
export const localSandboxUser = { uid: 65534, gid: 65534 } as const;

export interface LocalSandbox {
  readonly socket: string;
  readonly process: SupervisedProcess;
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
  const socket = join(options.dir, 'check.sock');
  const logFile = join(options.dir, 'sandbox.log');
  const asRoot = process.getuid?.() === 0;
  const sandbox = startSupervised({
    name: 'check sandbox',
    command: process.execPath,
    args: [
      join(projectRoot, 'src/cli/main.ts'),
      'sandbox',
      'serve',
      `--socket=${socket}`,
      ...(asRoot ? [`--user=${localSandboxUser.uid}:${localSandboxUser.gid}`] : []),
      ...(options.extraArgs ?? []),
    ],
    env: { PATH: process.env.PATH ?? '' },
    logFile,
  });
  const life = { exited: false };
  void sandbox.exited.then(() => {
    life.exited = true;
  });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && !life.exited) {
    if ((await probeSandbox(socket, 1_000)) === undefined) {
      return { socket, process: sandbox, logFile, stop: () => sandbox.stop() };
    }
    await sleep(50);
  }
  await sandbox.stop();
  throw new Error(`the check sandbox did not start; see ${logFile}`);
}
