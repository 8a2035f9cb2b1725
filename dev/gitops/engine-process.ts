/**
 * What the GitOps engines' processes share: the pinned module's directory in the Go module
 * cache (its CRDs and install manifests), and waiting until a started process answers its
 * health endpoint.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import type { SupervisedProcess } from '../lib/supervised-process.ts';
import { projectRoot } from '../lib/tools.ts';

/**
 * `module`'s directory and version as the wrapper module `tools/<wrapper>` pins it (downloaded
 * when dev/install-tools.sh built it). A wrapper may name a newer Go toolchain (tools/argocd).
 */
export async function moduleDir(
  wrapper: string,
  module: string,
): Promise<{ dir: string; version: string }> {
  const { stdout } = await execa('go', ['list', '-m', '-json', module], {
    cwd: join(projectRoot, 'tools', wrapper),
    env: { GOTOOLCHAIN: 'auto' },
  });
  const info = JSON.parse(stdout) as { Dir?: string; Version?: string };
  if (info.Dir === undefined || info.Version === undefined) {
    throw new Error(`${module} is not in the Go module cache; run dev/install-tools.sh first.`);
  }
  return { dir: info.Dir, version: info.Version };
}

/** Resolves once `url` answers 200; throws with the log's last lines if the process exits first. */
export async function waitHealthy(
  name: string,
  url: string,
  process: SupervisedProcess,
  log: string,
  ms = 60_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const answer = await fetch(url).catch(() => undefined);
    if (answer?.status === 200) return;
    const exited = await Promise.race([process.exited.then(() => true), sleep(250, false)]);
    if (exited || Date.now() > deadline) {
      const last = readFileSync(log, 'utf8').trim().split('\n').slice(-3).join(' | ');
      throw new Error(`${name} did not answer ${url}: ${last}`);
    }
  }
}
