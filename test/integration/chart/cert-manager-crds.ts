import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { moduleDir } from '../../../dev/gitops/engine-process.ts';

/**
 * cert-manager's CRDs, from its published Go module (deploy/crds/ of
 * github.com/cert-manager/cert-manager), pinned to the version the GitOps guide's
 * cert-manager profile uses. The module is found as the GitOps lifecycle finds it: through its
 * wrapper tools/cert-manager (moduleDir), whose go.sum verified it when dev/install-tools.sh
 * fetched it, before any egress-guarded run.
 */
export const certManagerModule = {
  path: 'github.com/cert-manager/cert-manager',
  version: 'v1.21.2',
} as const;

/** The CRD manifests as one YAML stream. */
export async function certManagerCrds(): Promise<string> {
  const { path, version } = certManagerModule;
  const pinned = await moduleDir('cert-manager', path);
  if (pinned.version !== version) {
    throw new Error(
      `tools/cert-manager pins ${path} ${pinned.version}, the GitOps guide's profile ${version}; pin one version in both.`,
    );
  }
  const dir = join(pinned.dir, 'deploy', 'crds');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => readFileSync(join(dir, file), 'utf8'))
    .join('\n---\n');
}
