/**
 * The rendered chart against the plan: the Secrets the rendered Deployments mount must be the
 * ones the validator checked. A difference is a defect of the chart or of the validator, and
 * rejecting is the only safe answer.
 */
import { validationCodes } from './codes.ts';
import { type Finding, error } from './finding.ts';
import { type ReleasePlan, type SecretRole, plannedSecret } from './release-plan.ts';
import { isRecord } from '../is-record.ts';

/** What the rule reads of a rendered object (src/render's RenderedObject fits). */
export interface RenderedObjectView {
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly body: Readonly<Record<string, unknown>>;
}

function field(value: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>(
    (current, key) => (isRecord(current) ? current[key] : undefined),
    value,
  );
}

/** The secretName of a Deployment's volume, or undefined when there is no such volume. */
export function mountedSecret(deployment: RenderedObjectView, volume: string): string | undefined {
  const volumes = field(deployment.body, ['spec', 'template', 'spec', 'volumes']);
  if (!Array.isArray(volumes)) return undefined;
  const found: unknown = volumes.find((entry) => isRecord(entry) && entry.name === volume);
  const name = field(found, ['secret', 'secretName']);
  return typeof name === 'string' ? name : undefined;
}

interface Mount {
  readonly deployment: string;
  readonly volume: string;
  readonly role: SecretRole;
}

function expectedMounts(plan: ReleasePlan): Mount[] {
  const mounts: Mount[] = [];
  if (plan.agentProvider !== 'legacy') {
    mounts.push(
      { deployment: plan.haproxyDeployment, volume: 'agent-tls', role: 'server' },
      { deployment: plan.controllerDeployment, volume: 'agent-tls', role: 'client' },
    );
  }
  if (plan.webhookSource !== 'none') {
    mounts.push({ deployment: plan.controllerDeployment, volume: 'webhook-tls', role: 'webhook' });
  }
  return mounts;
}

export function checkRenderedMounts(
  plan: ReleasePlan,
  objects: readonly RenderedObjectView[],
): Finding[] {
  return expectedMounts(plan).flatMap(({ deployment, volume, role }) => {
    const expected = plannedSecret(plan, role)?.name;
    const rendered = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === deployment);
    const actual = rendered === undefined ? undefined : mountedSecret(rendered, volume);
    return actual === expected
      ? []
      : [
          error(
            validationCodes.ChartRenderMismatch,
            `Deployment/${deployment}`,
            `The rendered Deployment ${deployment} mounts ${actual === undefined ? 'no Secret' : `Secret ${actual}`} as ${volume}, but the validator checked ${expected ?? 'none'}: ` +
              'the chart and the haptic binary disagree; use the image built with this chart and report the defect.',
          ),
        ];
  });
}
