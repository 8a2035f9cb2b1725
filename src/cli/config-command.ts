/**
 * `haptic config check <file|dir>`: for users' CI, the checks the controller and the agents
 * run on a configuration: the allow-list lint (haproxy.cfg and its crt-lists), then `haproxy
 * -c` in the check sandbox, its messages reduced to keyword, line and reason. A directory is
 * the configuration's base directory, with haproxy.cfg in it and the files it names
 * (maps/, ssl/, files/) relative to it; a file is checked with the files of its directory.
 * HAProxy never sees a configuration the lint refuses. Without --check-socket a sandbox is
 * started for the check (`haptic sandbox serve` as a separate process, empty environment).
 * Exit 0 valid, 1 rejected, 2 usage or environment error.
 */
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { Command } from 'commander';
import type { ApplyFile } from '../agent-api/apply-encoding.ts';
import { HapticError, describeError, errorCodes } from '../errors.ts';

const configName = 'haproxy.cfg';

interface CheckFlags {
  readonly checkSocket?: string;
}

function usage(message: string): HapticError {
  return new HapticError(errorCodes.USAGE_INVALID, message);
}

/** Regular files under `dir` (hidden entries and symbolic links left out), relative paths. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .filter((path) => !path.split('/').some((segment) => segment.startsWith('.')))
    .sort();
}

/** The complete set of files, the configuration as haproxy.cfg. */
async function readConfiguration(target: string): Promise<{
  readonly files: readonly ApplyFile[];
  /** The configuration file's own name, when it is not haproxy.cfg. */
  readonly renamed?: string;
}> {
  const found = await stat(target).catch(() => undefined);
  if (found === undefined) throw usage(`${target} does not exist; name a file or a directory.`);
  const baseDir = found.isDirectory() ? target : dirname(target);
  const configPath = found.isDirectory() ? join(target, configName) : target;
  const config = await readFile(configPath).catch((error: unknown) => {
    throw usage(
      `${configPath} cannot be read (${describeError(error)}); a directory must hold ${configName}.`,
    );
  });
  const others = (await filesUnder(baseDir)).filter(
    (path) => path !== configName && join(baseDir, path) !== join(configPath),
  );
  const files = await Promise.all(
    others.map(async (path) => ({ path, content: await readFile(join(baseDir, path)) })),
  );
  const name = basename(configPath);
  return {
    files: [{ path: configName, content: config }, ...files],
    ...(name === configName ? {} : { renamed: name }),
  };
}

/** The lint's findings as output lines; empty when everything passes. */
async function lintLines(files: readonly ApplyFile[]): Promise<string[]> {
  const { inspectConfigFiles } = await import('../haproxy/files-lint.ts');
  const { findings } = inspectConfigFiles((path) => {
    const file = files.find((candidate) => candidate.path === path);
    return file === undefined ? undefined : Buffer.from(file.content).toString('utf8');
  });
  return findings.map((finding) => `${finding.file}: ${finding.message}`);
}

/** Starts `haptic sandbox serve` on a private socket for one check. */
async function withLocalSandbox<T>(use: (socket: string) => Promise<T>): Promise<T> {
  const { launchSandbox } = await import('../sandbox/sandbox-launcher.ts');
  const dir = await mkdtemp(join(tmpdir(), 'haptic-config-check-'));
  try {
    const sandbox = await launchSandbox({
      socket: join(dir, 'check.sock'),
      extraArgs: ['--log-level=warn'],
    });
    try {
      return await use(sandbox.socket);
    } finally {
      await sandbox.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs the check and returns the exit code. */
async function runConfigCheck(target: string, flags: CheckFlags): Promise<number> {
  const { files, renamed } = await readConfiguration(target);
  const refused = await lintLines(files);
  if (refused.length > 0) {
    process.stdout.write(`${target} is refused by the allow-list lint (HAProxy did not run):\n`);
    process.stdout.write(`${refused.map((line) => `  ${line}`).join('\n')}\n`);
    return 1;
  }
  const { checkHAProxyConfig } = await import('../sandbox/check-client.ts');
  const check = (socket: string) => checkHAProxyConfig(files, { socket });
  const outcome = await (flags.checkSocket === undefined
    ? withLocalSandbox(check)
    : check(flags.checkSocket));
  const checked = renamed === undefined ? '' : ` (${renamed} checked as ${configName})`;
  if (outcome.ok) {
    process.stdout.write(`${target} is valid: the lint and haproxy -c accept it${checked}.\n`);
    return 0;
  }
  if (outcome.failure === 'unavailable') {
    process.stderr.write(`haptic config check: ${outcome.message}\n`);
    return 2;
  }
  // checkHAProxyConfig reduced HAProxy's output: file, line, keyword and reason only.
  const { message } = outcome;
  process.stdout.write(`${target} is rejected by haproxy -c${checked}:\n`);
  process.stdout.write(
    `${message
      .split('\n')
      .map((line) => `  ${line}`)
      .join('\n')}\n`,
  );
  return 1;
}

export function registerConfigCommand(program: Command): void {
  const config = program
    .command('config')
    .description('HAProxy configurations as the controller and the agents check them');
  config
    .command('check')
    .description(
      'lint a configuration (a directory with haproxy.cfg, or the file) with the allow-list, then haproxy -c in the check sandbox; exit 0 valid, 1 rejected, 2 usage or environment error',
    )
    .argument('<file|dir>', 'haproxy.cfg, or the directory holding it and the files it names')
    .option(
      '--check-socket <path>',
      'Unix socket of a running check sandbox (haptic sandbox serve); default: start one for this check',
    )
    .action(async (target: string, flags: CheckFlags) => {
      try {
        process.exitCode = await runConfigCheck(target, flags);
      } catch (error) {
        process.stderr.write(`haptic config check: ${describeError(error)}\n`);
        process.exitCode = 2;
      }
    });
}
