/**
 * `haptic version`: what this binary is and what it runs with — its version (the embedded
 * chart's), the HAProxy its checks run (the image's own, or the first `haproxy` on PATH) and
 * Node.js. `haptic --version` prints the first alone.
 */
import { readHaproxyVersion, resolveHaproxyBinary } from '../sandbox/haproxy-binary.ts';
import { readPackageVersion } from '../version.ts';

export async function describeVersions(): Promise<string> {
  const binary = await resolveHaproxyBinary('haproxy').catch(() => undefined);
  const haproxy = binary === undefined ? undefined : await readHaproxyVersion(binary);
  const haproxyLine =
    binary === undefined
      ? 'HAProxy: none on PATH (install it: dev/install-haproxy.sh)'
      : `HAProxy ${haproxy ?? 'that does not run'} (${binary})`;
  return `haptic ${readPackageVersion()}\n${haproxyLine}\nNode.js ${process.version}\n`;
}
