/**
 * The haproxy a process runs, found once at start: a bare name is looked up on this process's
 * PATH (the checks themselves run with a fixed system PATH, so they get the absolute path and
 * run exactly the binary found here), and its version read from `haproxy -v`.
 */
import { execa } from 'execa';
import which from 'which';
import { HapticError, errorCodes } from '../errors.ts';

/** `binary` as an absolute path: itself when it names a path, else found on `path`. */
export async function resolveHaproxyBinary(
  binary: string,
  path: string = process.env.PATH ?? '',
): Promise<string> {
  if (binary.includes('/')) return binary;
  const found = await which(binary, { path, nothrow: true });
  if (found === null) {
    throw new HapticError(
      errorCodes.SANDBOX_START_FAILED,
      `${binary} is not on PATH (${path}); install HAProxy 3.0 (dev/install-haproxy.sh puts the project's build in .tools/bin) or pass --haproxy-binary.`,
    );
  }
  return found;
}

/** The version `haproxy -v` prints first ("HAProxy version 3.0.11-1+deb13u5 2026/…"). */
export function parseHaproxyVersion(output: string): string | undefined {
  return /^HA-?Proxy version (\S+)/m.exec(output)?.[1];
}

/** The version of `binary`, or undefined when it does not run. */
export async function readHaproxyVersion(binary = 'haproxy'): Promise<string | undefined> {
  const result = await execa(binary, ['-v'], { reject: false, stdin: 'ignore', timeout: 10_000 });
  return result.exitCode === 0 ? parseHaproxyVersion(result.stdout) : undefined;
}
