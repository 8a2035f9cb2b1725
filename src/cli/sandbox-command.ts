/** `haptic sandbox serve` and `haptic sandbox health`: commander wiring only. */
import { tmpdir } from 'node:os';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { defaultSandboxLimits } from '../sandbox/sandbox-limits.ts';
import {
  type NetworkIsolationChoice,
  networkIsolationChoices,
} from '../sandbox/network-isolation.ts';
import { defaultCheckSocket } from '../sandbox/sandbox-protocol.ts';
import type { SandboxUser } from '../sandbox/sandbox-service.ts';
import { seconds } from './option-parsers.ts';

interface ServeFlags {
  readonly socket: string;
  readonly workDir: string;
  readonly haproxyBinary: string;
  readonly timeLimit: number;
  readonly memoryLimit: number;
  readonly maxConcurrent: number;
  readonly maxWaiting: number;
  readonly user?: SandboxUser;
  readonly networkIsolation: NetworkIsolationChoice;
  readonly logLevel: string;
}

function count(value: string): number {
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1) {
    throw new InvalidArgumentError('must be a whole number from 1 to 9999.');
  }
  return Number(value);
}

function mebibytes(value: string): number {
  if (!/^\d{1,6}$/.test(value) || Number(value) < 16) {
    throw new InvalidArgumentError('must be a whole number of MiB, at least 16.');
  }
  return Number(value) * 1024 * 1024;
}

function user(value: string): SandboxUser {
  const match = /^(\d{1,10}):(\d{1,10})$/.exec(value);
  const uid = Number(match?.[1]);
  const gid = Number(match?.[2]);
  if (match === null || uid === 0 || gid === 0 || uid > 2 ** 32 - 2 || gid > 2 ** 32 - 2) {
    throw new InvalidArgumentError(
      'must be uid:gid of a user other than root, such as 65534:65534.',
    );
  }
  return { uid, gid };
}

export function registerSandboxCommand(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description(
      'the check sandbox: runs haproxy -c on hostile configuration where there is nothing to steal',
    );
  addServe(sandbox);
  addHealth(sandbox);
}

/** Adds `sandbox serve` under `sandbox`. */
function addServe(sandbox: Command): void {
  sandbox
    .command('serve')
    .description(
      'serve checks on a Unix socket: each set of files in a fresh private directory, haproxy -c with an empty environment, time, CPU, memory and process limits',
    )
    .option('--socket <path>', 'Unix socket to listen on (mode 0660)', defaultCheckSocket)
    .option('--work-dir <dir>', 'where the private check directories are made', tmpdir())
    .option('--haproxy-binary <path>', 'haproxy to run (from PATH when a bare name)', 'haproxy')
    .addOption(
      new Option('--time-limit <seconds>', 'wall-clock time of one check, then SIGKILL')
        .argParser(seconds)
        .default(defaultSandboxLimits.timeMs, String(defaultSandboxLimits.timeMs / 1000)),
    )
    .addOption(
      new Option('--memory-limit <MiB>', 'address space of one check (RLIMIT_AS)')
        .argParser(mebibytes)
        .default(
          defaultSandboxLimits.memoryBytes,
          String(defaultSandboxLimits.memoryBytes / 1024 / 1024),
        ),
    )
    .addOption(
      new Option('--max-concurrent <n>', 'checks that run at once')
        .argParser(count)
        .default(defaultSandboxLimits.concurrent),
    )
    .addOption(
      new Option('--max-waiting <n>', 'checks that may wait; more are answered as busy')
        .argParser(count)
        .default(defaultSandboxLimits.waiting),
    )
    .option(
      '--user <uid:gid>',
      'when started as root (local runs), become this user after binding the socket; in a Pod the container user applies',
      user,
    )
    .addOption(
      new Option(
        '--network-isolation <how>',
        'how each haproxy -c is cut off from the network: seccomp (the haptic-no-network helper on PATH), namespace (unshare --net), auto (the first that works); the sandbox does not start without one',
      )
        .choices(networkIsolationChoices)
        .default('auto'),
    )
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal'])
        .default('info'),
    )
    .action(serve);
}

async function serve(flags: ServeFlags): Promise<void> {
  const { runSandboxProcess } = await import('../sandbox/sandbox-process.ts');
  process.exitCode = await runSandboxProcess(
    {
      socket: flags.socket,
      workDir: flags.workDir,
      haproxyBinary: flags.haproxyBinary,
      limits: {
        ...defaultSandboxLimits,
        timeMs: flags.timeLimit,
        memoryBytes: flags.memoryLimit,
        concurrent: flags.maxConcurrent,
        waiting: flags.maxWaiting,
      },
      networkIsolation: flags.networkIsolation,
      ...(flags.user === undefined ? {} : { user: flags.user }),
    },
    flags.logLevel,
  );
}

/** Adds `sandbox health` under `sandbox`. */
function addHealth(sandbox: Command): void {
  sandbox
    .command('health')
    .description(
      'exit 0 while the check sandbox answers on its socket (startup and liveness probe)',
    )
    .option('--socket <path>', 'the sandbox socket', defaultCheckSocket)
    .addOption(
      new Option('--timeout <seconds>', 'how long to wait for the answer')
        .argParser(seconds)
        .default(3_000, '3'),
    )
    .action(async (flags: { socket: string; timeout: number }) => {
      const { probeSandbox } = await import('../sandbox/check-client.ts');
      const problem = await probeSandbox(flags.socket, flags.timeout);
      if (problem !== undefined) process.stderr.write(`haptic sandbox health: ${problem}\n`);
      process.exitCode = problem === undefined ? 0 : 1;
    });
}
