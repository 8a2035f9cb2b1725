/**
 * `haproxy -c` on a complete set of rendered files, through the agent's sandboxed check
 * (scrubbed environment, own HOME and TMPDIR, time limit). The files are laid out in a fresh
 * private directory exactly as in the agents' base directory, then removed.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type CheckOutcome, checkHAProxyConfig } from '../agent/config-check.ts';
import type { BundleFile } from './agent-client.ts';

export interface BundleCheckOptions {
  /** @default haproxy */
  readonly binary?: string;
  /** @default 30 seconds */
  readonly timeoutMs?: number;
}

export async function checkBundle(
  files: readonly BundleFile[],
  options: BundleCheckOptions = {},
): Promise<CheckOutcome> {
  const dir = await mkdtemp(join(tmpdir(), 'haptic-bundle-'));
  try {
    for (const file of files) {
      // Paths come from the controller's own naming (maps/, files/, ssl/ and checked names).
      if (file.path.startsWith('/') || file.path.split('/').includes('..')) {
        return {
          ok: false,
          failure: 'rejected',
          message: `${file.path} is not a relative path.`,
        };
      }
      const target = join(dir, file.path);
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await writeFile(target, file.content, { mode: 0o600 });
    }
    const outcome = await checkHAProxyConfig(join(dir, 'haproxy.cfg'), {
      ...(options.binary === undefined ? {} : { binary: options.binary }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
    // Messages name files as the agents do (haproxy.cfg:47), not by the sandbox's path.
    return outcome.ok
      ? outcome
      : { ...outcome, message: outcome.message.replaceAll(`${dir}/`, '') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
