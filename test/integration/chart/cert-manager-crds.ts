import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { projectRoot } from '../../../dev/lib/tools.ts';

/**
 * cert-manager's CRDs, from its published Go module (deploy/crds/ of
 * github.com/cert-manager/cert-manager), pinned to the version the GitOps guide's
 * cert-manager profile uses. dev/install-tools.sh fetches it into the module cache (before any
 * egress-guarded run); `go mod download` in its wrapper module (tools/cert-manager) finds it
 * there, verified by the wrapper's go.sum, without asking the checksum database, and the
 * result is checked against the pinned checksum.
 */
export const certManagerModule = {
  path: 'github.com/cert-manager/cert-manager',
  version: 'v1.21.2',
  sum: 'h1:UWgoYM+KLNtRlqmoWOKjKBOBUPVHeepQ6/ac3ERJW68=',
} as const;

/** The CRD manifests as one YAML stream. */
export async function certManagerCrds(): Promise<string> {
  const { path, version, sum } = certManagerModule;
  const result = await execa('go', ['mod', 'download', '-json', `${path}@${version}`], {
    cwd: join(projectRoot, 'tools', 'cert-manager'),
    env: { GOTOOLCHAIN: 'auto' },
    reject: false,
  });
  const info = (result.stdout === '' ? {} : JSON.parse(result.stdout)) as {
    Dir?: string;
    Sum?: string;
    Error?: string;
  };
  if (info.Error !== undefined || info.Dir === undefined) {
    throw new Error(
      `${path}@${version} is not in the Go module cache (${info.Error ?? result.stderr}); run make setup (dev/install-tools.sh) first.`,
    );
  }
  if (info.Sum !== sum) {
    throw new Error(`${path}@${version}: expected checksum ${sum}, got ${String(info.Sum)}`);
  }
  const dir = join(info.Dir, 'deploy', 'crds');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => readFileSync(join(dir, file), 'utf8'))
    .join('\n---\n');
}
