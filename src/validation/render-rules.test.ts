import { describe, expect, it } from 'vitest';
import { chartDefaults } from '../../test/unit/validation/material.ts';
import { planRelease } from './release-plan.ts';
import { readReleaseValues } from './release-values.ts';
import { checkRenderedMounts } from './render-rules.ts';

const plan = planRelease('haptic', 'haptic', readReleaseValues(chartDefaults()));

/** A Deployment mounting `secretName` as agent-tls, and `webhook` as webhook-tls when given. */
function deployment(name: string, secretName: string, webhook?: string) {
  const volumes = [{ name: 'agent-tls', secret: { secretName } }];
  if (webhook !== undefined) volumes.push({ name: 'webhook-tls', secret: { secretName: webhook } });
  return {
    kind: 'Deployment',
    metadata: { name },
    body: { spec: { template: { spec: { volumes } } } },
  };
}

describe('rendered mounts', () => {
  it('accept Deployments that mount the planned identity Secrets', () => {
    expect(
      checkRenderedMounts(plan, [
        deployment('haptic-controller', 'haptic-agent-client-tls', 'haptic-webhook-default-tls'),
        deployment('haptic-haproxy', 'haptic-agent-server-tls'),
      ]),
    ).toEqual([]);
  });

  it('reject a rendered chart that mounts another Secret than the validator checked', () => {
    const found = checkRenderedMounts(plan, [
      deployment('haptic-controller', 'haptic-agent-client-tls', 'haptic-webhook-default-tls'),
      deployment('haptic-haproxy', 'something-else'),
    ]);
    expect(found).toEqual([
      {
        code: 'ChartRenderMismatch',
        severity: 'error',
        path: 'Deployment/haptic-haproxy',
        message:
          'The rendered Deployment haptic-haproxy mounts Secret something-else as agent-tls, but the validator checked haptic-agent-server-tls: the chart and the haptic binary disagree; use the image built with this chart and report the defect.',
      },
    ]);
  });
});
