import { execa } from 'execa';
import { inject } from 'vitest';
import { projectRoot } from '../../dev/lib/tools.ts';

/** agent-certificates.txt, "Check expiry", verbatim (it hard-codes namespace `haptic`). */
export const checkExpiryScript = `set -euo pipefail
needs_rotation=0
for deployment in haptic-controller haptic-haproxy; do
secret=$(kubectl get deployment "$deployment" -n haptic -o json |
jq -er '.spec.template.spec.volumes[] | select(.name == "agent-tls").secret.secretName')
for key in tls.crt ca.crt; do
printf '%s %s: ' "$secret" "$key"
if ! kubectl get secret "$secret" -n haptic -o json |
jq -er --arg key "$key" '.data[$key]' | base64 -d |
openssl x509 -noout -enddate -checkend 2592000; then
needs_rotation=1
fi
done
done
test "$needs_rotation" -eq 0
`;

/**
 * Runs the guide's script with the pinned kubectl against the shared control plane. For a
 * namespace other than `haptic`, `-n haptic` is substituted (as `sed 's/-n haptic/-n <ns>/g'`
 * would) and nothing else changes.
 */
export async function runCheckExpiry(
  namespace = 'haptic',
): Promise<{ exitCode: number | undefined; stdout: string; stderr: string }> {
  const script = checkExpiryScript.replaceAll('-n haptic', `-n ${namespace}`);
  const result = await execa('bash', ['-c', script], {
    env: {
      PATH: `${projectRoot}.tools/bin:${process.env.PATH ?? ''}`,
      KUBECONFIG: inject('kubeconfig'),
    },
    reject: false,
  });
  return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
}
