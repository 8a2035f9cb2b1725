/**
 * `haproxy -c` on a configuration, for HAProxy's own error message. The configuration is
 * hostile input (linted before this runs), so the check runs as a child process with a
 * scrubbed environment (no credentials, no proxy settings), its own temporary directory as
 * HOME and TMPDIR, no stdin, and a time limit after which it is killed. Relative paths in the
 * configuration resolve against the base directory (`-C`), like the paths of an apply.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';

export interface CheckOptions {
  /** @default haproxy (from PATH) */
  readonly binary?: string;
  /** @default 30 seconds */
  readonly timeoutMs?: number;
  /**
   * Directory relative paths in the configuration resolve against (`haproxy -C`): the base
   * directory, as apply paths do. @default the configuration's own directory
   */
  readonly directory?: string;
}

export type CheckOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** `rejected`: HAProxy reported errors; `unavailable`: the check could not run. */
      readonly failure: 'rejected' | 'unavailable';
      readonly message: string;
    };

/** Largest message kept from HAProxy's output. */
const maxMessageChars = 8_000;

/** HAProxy's alert and warning lines, without PIDs and start-up notices. */
export function haproxyMessage(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.replace(/^\[(\w+)\]\s+\(\d+\)\s*:\s*/, '[$1] ').trimEnd())
    .filter((line) => line !== '' && !line.startsWith('[NOTICE]'));
  const text = lines.join('\n');
  return text.length > maxMessageChars ? `${text.slice(0, maxMessageChars)}…` : text;
}

/** Runs `haproxy -c -f <configPath>` in a sandbox. */
export async function checkHAProxyConfig(
  configPath: string,
  options: CheckOptions = {},
): Promise<CheckOutcome> {
  const binary = options.binary ?? 'haproxy';
  const timeoutMs = options.timeoutMs ?? 30_000;
  const sandbox = await mkdtemp(join(tmpdir(), 'haptic-check-'));
  try {
    const directory = options.directory ?? dirname(configPath);
    const result = await execa(binary, ['-c', '-C', directory, '-f', configPath], {
      cwd: sandbox,
      env: {
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        HOME: sandbox,
        TMPDIR: sandbox,
        LANG: 'C',
      },
      extendEnv: false,
      stdin: 'ignore',
      all: true,
      reject: false,
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: 1024 * 1024,
    });
    if (result.timedOut) {
      return {
        ok: false,
        failure: 'unavailable',
        message: `haproxy -c did not finish within ${timeoutMs} ms and was stopped.`,
      };
    }
    if (result.exitCode === 0) return { ok: true };
    if (result.exitCode === undefined) {
      return {
        ok: false,
        failure: 'unavailable',
        message: `${binary} could not run: ${result.shortMessage}`,
      };
    }
    return { ok: false, failure: 'rejected', message: haproxyMessage(result.all) };
  } finally {
    await rm(sandbox, { recursive: true, force: true });
  }
}
