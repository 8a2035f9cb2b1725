import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';

/**
 * cert-manager's CRDs, from its published Go module (deploy/crds/ of
 * github.com/cert-manager/cert-manager), pinned to the version the GitOps guide's
 * cert-manager profile uses. `go mod download` fetches it through the Go module proxy once
 * into the module cache and verifies it against the pinned checksum.
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
    cwd: '/',
    env: { GOFLAGS: '-mod=mod' },
  });
  const info = JSON.parse(result.stdout) as { Dir?: string; Sum?: string; Error?: string };
  if (info.Sum !== sum || info.Dir === undefined) {
    throw new Error(`${path}@${version}: expected checksum ${sum}, got ${JSON.stringify(info)}`);
  }
  const dir = join(info.Dir, 'deploy', 'crds');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => readFileSync(join(dir, file), 'utf8'))
    .join('\n---\n');
}
