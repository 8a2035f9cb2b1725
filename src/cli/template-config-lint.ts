/**
 * The pre-rollout Job's look at the release's own HAProxyTemplateConfig: rendered as the
 * controller renders it (with no Ingresses yet) and linted with the allow-list, so a release
 * whose template loads code or reads files is refused before anything rolls, not by the
 * webhook after the Deployments changed. `haproxy -c` is not run here (no check sandbox in the
 * Job); the controller and its webhook still run it.
 */
import type { Finding, RenderedObjectView } from '../validation/index.ts';
import { validationCodes } from '../validation/index.ts';
import { error } from '../validation/finding.ts';
import { emptySnapshot } from '../controller/routing/cluster-snapshot.ts';
import { ConfigPipeline } from '../controller/pipeline/config-pipeline.ts';

/** The findings of the lint of these HAProxyTemplateConfigs (rendered objects of that kind). */
export async function lintTemplateConfigs(
  configs: readonly RenderedObjectView[],
  now: Date,
): Promise<Finding[]> {
  if (configs.length === 0) return [];
  // With no Ingresses the class selects nothing, and lintOnly stops before haproxy -c, so
  // neither option is used.
  const pipeline = new ConfigPipeline({ ingressClass: '', check: { socket: '' } });
  try {
    const findings: Finding[] = [];
    for (const config of configs) {
      // What the template makes of nothing: the release has no Ingresses yet.
      const outcome = await pipeline.run(config.body, emptySnapshot, now, {
        proposed: true,
        lintOnly: true,
      });
      if (outcome.ok) continue;
      const code =
        outcome.stage === 'lint'
          ? validationCodes.RenderedConfigForbidden
          : validationCodes.TemplateConfigInvalid;
      findings.push(
        error(
          code,
          `HAProxyTemplateConfig ${config.metadata.name} ${outcome.field}`,
          `The release's HAProxyTemplateConfig ${config.metadata.name}: ${outcome.message}`,
        ),
      );
    }
    return findings;
  } finally {
    await pipeline.close();
  }
}
