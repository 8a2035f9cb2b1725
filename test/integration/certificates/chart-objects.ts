/** Objects of the embedded chart, rendered with helm and applied to the shared control plane. */
import { fileURLToPath } from 'node:url';
import { helm, kubectl, serviceAccountKubeconfig } from '../../support/cluster.ts';

const chartDir = fileURLToPath(new URL('../../../chart', import.meta.url));

/** Objects of one template of the embedded chart, rendered for release `haptic` in `namespace`. */
export async function renderTemplate(
  namespace: string,
  template: string,
  set: readonly string[] = [],
): Promise<string> {
  const args = [
    'template',
    'haptic',
    chartDir,
    '-n',
    namespace,
    '--show-only',
    `templates/${template}`,
  ];
  for (const value of set) args.push('--set', value);
  const result = await helm(args);
  if (result.exitCode !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return result.stdout;
}

/** Applies rendered objects to the shared control plane. */
export async function apply(namespace: string, manifest: string): Promise<void> {
  const result = await kubectl(['apply', '-n', namespace, '-f', '-'], manifest);
  if (result.exitCode !== 0) throw new Error(`kubectl apply failed: ${result.stderr}`);
}

/**
 * The renewal CronJob with its ServiceAccount and Role as the chart renders them, applied;
 * returns a kubeconfig of that ServiceAccount (its token, nothing else).
 */
export async function renewalServiceAccount(namespace: string): Promise<string> {
  await apply(namespace, await renderTemplate(namespace, 'agent-renewal-cronjob.yaml'));
  return serviceAccountKubeconfig(namespace, 'haptic-agent-renewal');
}
