/** Runs `haptic preflight` from source, as a separate process, against the shared control plane. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { inject } from 'vitest';
import { stringify } from 'yaml';
import { projectRoot, toolPath } from '../../../dev/lib/tools.ts';
import type { CommandResult } from '../../support/cluster.ts';

const main = join(projectRoot, 'src/cli/main.ts');

/** Writes values to a temporary file and returns its path. */
export function valuesFile(values: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'preflight-values-')), 'values.yaml');
  writeFileSync(path, stringify(values));
  return path;
}

export async function preflight(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<CommandResult> {
  const result = await execa(process.execPath, [main, 'preflight', ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HELM_BIN: toolPath('helm'),
      KUBECONFIG: inject('kubeconfig'),
      ...env,
    },
    extendEnv: false,
    reject: false,
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}
