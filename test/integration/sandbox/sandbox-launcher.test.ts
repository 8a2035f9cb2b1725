/**
 * The sandbox launcher `haptic config check` uses (src/sandbox/sandbox-launcher.ts), as a
 * real process: a sandbox that cannot start is reported with its own reason, and nothing is
 * left listening; one that starts answers checks and is gone after stop().
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { errorCodes } from '../../../src/errors.ts';
import { probeSandbox } from '../../../src/sandbox/check-client.ts';
import { launchSandbox } from '../../../src/sandbox/sandbox-launcher.ts';

const program = { main: join(projectRoot, 'src/cli/main.ts'), execArgv: [] };

describe('launchSandbox', () => {
  it('reports why the sandbox did not start, with its own message', async () => {
    const socket = join(mkdtempSync(join(tmpdir(), 'launcher-')), 'check.sock');
    await expect(
      launchSandbox({ ...program, socket, extraArgs: ['--work-dir=/nonexistent/haptic'] }),
    ).rejects.toMatchObject({
      code: errorCodes.SANDBOX_START_FAILED,
      message: expect.stringMatching(
        /^The check sandbox did not start \(The check sandbox at .*check\.sock cannot be reached .*\): [^]*cannot create its directory in \/nonexistent\/haptic/,
      ) as unknown,
    });
    expect(existsSync(socket)).toBe(false);
  });

  it('answers on its socket once started, and not after stop()', async () => {
    const socket = join(mkdtempSync(join(tmpdir(), 'launcher-')), 'check.sock');
    const sandbox = await launchSandbox({ ...program, socket, extraArgs: ['--log-level=warn'] });
    expect(await probeSandbox(socket, 1_000)).toBeUndefined();
    await sandbox.stop();
    expect(await probeSandbox(socket, 1_000)).toMatch(/cannot be reached/);
  });
});
