/**
 * The control of the attack tests: plain `haproxy -c` on a configuration directory, with no
 * lint and no sandbox in front, an environment of PATH only (as the check sandbox gives it)
 * and, when the tests run as root, as the sandbox's user 65534. A Lua payload that creates its
 * marker here proves the marker would appear if any door let HAProxy load it.
 */
import { join } from 'node:path';
import { execa } from 'execa';

/** Runs `haproxy -c -C dir -f dir/haproxy.cfg`; the exit code (HAProxy may still have run Lua). */
export async function plainHaproxyCheck(dir: string): Promise<number | undefined> {
  const check = ['haproxy', '-c', '-C', dir, '-f', join(dir, 'haproxy.cfg')];
  const asRoot = process.getuid?.() === 0;
  const command = asRoot
    ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...check]
    : check;
  const [program = 'haproxy', ...args] = command;
  const result = await execa(program, args, {
    reject: false,
    env: { PATH: process.env.PATH ?? '' },
    extendEnv: false,
    stdin: 'ignore',
    timeout: 30_000,
  });
  return result.exitCode;
}
