import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The project root (this file lives in dev/lib/). */
export const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Absolute path of a pinned tool built by dev/install-tools.sh into .tools/bin. Throws with
 * the fix when it is missing, rather than silently picking up another version from PATH.
 */
export function toolPath(name: 'etcd' | 'kube-apiserver' | 'kubectl' | 'helm' | 'helm4'): string {
  const path = `${projectRoot}.tools/bin/${name}`;
  if (!existsSync(path)) {
    throw new Error(`${path} is missing; run \`make setup\` (dev/install-tools.sh) first.`);
  }
  return path;
}
