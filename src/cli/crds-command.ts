import type { Command } from 'commander';
import { applyEmbeddedCrds } from '../crds/apply-crds.ts';
import { describeError } from '../errors.ts';
import { loadKubeConfig } from '../kube/kube-config.ts';
import { createLogger } from '../logger.ts';

/** `haptic crds apply`: the chart's CRD hook Job. */
export function registerCrdsCommand(program: Command): void {
  const crds = program
    .command('crds')
    .description('the CustomResourceDefinitions embedded in haptic');
  crds
    .command('apply')
    .description('server-side apply the embedded CRDs (creates or upgrades; never deletes)')
    .option(
      '--kubeconfig <path>',
      'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)',
    )
    .action(async (options: { kubeconfig?: string }) => {
      const logger = createLogger({ component: 'crds apply', sync: true });
      try {
        for (const crd of await applyEmbeddedCrds(loadKubeConfig(options.kubeconfig))) {
          logger.info(
            { event: 'applied', ...crd },
            `Applied CustomResourceDefinition ${crd.name}.`,
          );
        }
      } catch (error) {
        process.stderr.write(`haptic crds apply: ${describeError(error)}\n`);
        process.exitCode = 1;
      }
    });
}
