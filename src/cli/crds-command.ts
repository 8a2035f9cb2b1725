import type { Command } from 'commander';
import { describeError } from '../errors.ts';

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
      // Implementations load on use, so every command starts quickly.
      const [{ applyEmbeddedCrds }, { loadKubeConfig }, { createLogger }] = await Promise.all([
        import('../api/apply-crds.ts'),
        import('../kube/kube-config.ts'),
        import('../logger.ts'),
      ]);
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
