/**
 * Starting the check sandbox: its own private work directory, the Unix socket (a stale one
 * from an earlier run of the container is replaced; mode 0660, so only its Pod's user or
 * group connects), then, when started as root with a `user`, the drop to that user (no
 * supplementary groups) before anything is checked, and a first `haproxy -v` through the same
 * network isolation and limits, so a missing haproxy or prlimit, or a sandbox that cannot cut
 * HAProxy off the network (network-isolation.ts), stops the start instead of every later check.
 * Requests that arrive before all of that (the socket listens from the start) are answered
 * 503, so no check runs as root or half-way through the drop.
 */
import { chmod, chown, lstat, mkdtemp, rm, unlink } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { execa } from 'execa';
import type { Logger } from 'pino';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { resolveHaproxyBinary } from './haproxy-binary.ts';
import { checkPath } from './haproxy-check-run.ts';
import {
  type NetworkIsolation,
  type NetworkIsolationChoice,
  selectNetworkIsolation,
} from './network-isolation.ts';
import { type SandboxLimits, prlimitArgs } from './sandbox-limits.ts';
import { createSandboxServer } from './sandbox-server.ts';

export interface SandboxUser {
  readonly uid: number;
  readonly gid: number;
}

export interface SandboxOptions {
  readonly socket: string;
  /** Where the sandbox makes its private directory. @default the system temporary directory */
  readonly workDir: string;
  /** A path, or a name looked up on the sandbox's PATH at start. */
  readonly haproxyBinary: string;
  readonly limits: SandboxLimits;
  /** How checks are cut off from the network. @default auto */
  readonly networkIsolation?: NetworkIsolationChoice;
  /** Run as this user after binding the socket; only when started as root (local runs). */
  readonly user?: SandboxUser;
}

export interface RunningSandbox {
  readonly workDir: string;
  close(): Promise<void>;
}

function startFailed(message: string, cause?: unknown): HapticError {
  return new HapticError(
    errorCodes.SANDBOX_START_FAILED,
    message,
    cause === undefined ? undefined : { cause },
  );
}

async function removeStaleSocket(path: string): Promise<void> {
  const stat = await lstat(path).catch(() => undefined);
  if (stat === undefined) return;
  if (!stat.isSocket()) {
    throw startFailed(`${path} exists and is not a socket; choose another --socket.`);
  }
  await unlink(path);
}

async function listen(server: Server, path: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      reject(startFailed(`The check sandbox cannot listen on ${path}: ${describeError(error)}.`));
    };
    server.once('error', onError);
    server.listen(path, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function dropPrivileges(user: SandboxUser): void {
  const { setgroups, setgid, setuid } = process;
  if (setgroups === undefined || setgid === undefined || setuid === undefined) {
    throw startFailed('--user needs a POSIX system.');
  }
  setgroups([]);
  setgid(user.gid);
  setuid(user.uid);
  if (process.getuid?.() !== user.uid || process.getgid?.() !== user.gid) {
    throw startFailed(`The check sandbox could not become ${user.uid}:${user.gid}.`);
  }
}

async function verifyTools(options: SandboxOptions): Promise<NetworkIsolation> {
  const result = await execa(
    'prlimit',
    [...prlimitArgs(options.limits), '--', options.haproxyBinary, '-v'],
    { reject: false, extendEnv: false, env: { PATH: checkPath }, stdin: 'ignore' },
  );
  if (result.exitCode !== 0) {
    throw startFailed(
      `The check sandbox needs prlimit (util-linux) and ${options.haproxyBinary}: ${result.exitCode === undefined ? result.shortMessage : result.stderr.trim()}`,
    );
  }
  // The helper is looked up on the sandbox's own PATH (the checks get checkPath only).
  const isolation = await selectNetworkIsolation(
    options.networkIsolation ?? 'auto',
    `${process.env.PATH ?? ''}:${checkPath}`,
    async ({ command: [command = '', ...args] }) => {
      const trial = await execa(
        command,
        [...args, 'prlimit', ...prlimitArgs(options.limits), '--', options.haproxyBinary, '-v'],
        { reject: false, extendEnv: false, env: { PATH: checkPath }, stdin: 'ignore', all: true },
      );
      return {
        exitCode: trial.exitCode,
        message: trial.exitCode === undefined ? (trial.shortMessage ?? 'did not start') : trial.all,
      };
    },
  );
  if ('problem' in isolation) throw startFailed(`${isolation.problem}.`);
  return isolation;
}

export async function startSandbox(
  requested: SandboxOptions,
  logger: Logger,
): Promise<RunningSandbox> {
  const options = {
    ...requested,
    haproxyBinary: await resolveHaproxyBinary(requested.haproxyBinary),
  };
  const { user } = options;
  if (user !== undefined && process.getuid?.() !== 0) {
    throw startFailed(
      '--user needs the sandbox to start as root; without root, run it as the user it should be (the chart sets the container user).',
    );
  }
  const workDir = await mkdtemp(join(options.workDir, 'haptic-sandbox-')).catch(
    (error: unknown) => {
      throw startFailed(
        `The check sandbox cannot create its directory in ${options.workDir}: ${describeError(error)}.`,
        error,
      );
    },
  );
  const state: { ready: boolean; isolation: NetworkIsolation | undefined } = {
    ready: false,
    isolation: undefined,
  };
  const server = createSandboxServer({
    workDir,
    haproxyBinary: options.haproxyBinary,
    isolation: () => state.isolation?.command ?? [],
    limits: options.limits,
    logger,
    ready: () => state.ready,
  });
  try {
    await removeStaleSocket(options.socket);
    await listen(server, options.socket);
    await chmod(options.socket, 0o660);
    if (user !== undefined) {
      await chown(workDir, user.uid, user.gid);
      await chown(options.socket, user.uid, user.gid);
      dropPrivileges(user);
    }
    state.isolation = await verifyTools(options);
    state.ready = true;
  } catch (error) {
    server.close();
    await rm(workDir, { recursive: true, force: true });
    throw error;
  }
  logger.info(
    {
      socket: options.socket,
      workDir,
      uid: process.getuid?.(),
      networkIsolation: state.isolation.kind,
      limits: {
        timeMs: options.limits.timeMs,
        memoryBytes: options.limits.memoryBytes,
        concurrent: options.limits.concurrent,
        waiting: options.limits.waiting,
      },
    },
    'check sandbox listening',
  );
  return {
    workDir,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      await rm(workDir, { recursive: true, force: true });
    },
  };
}
