/**
 * The webhook's routes for a release name of the greatest length Helm accepts: the values
 * Secret and the identity Secrets are recognised under the names the real `helm template`
 * gives them (shortened with a hash), not under plainly truncated ones.
 */
import { describe, expect, it } from 'vitest';
import { toolPath } from '../../dev/lib/tools.ts';
import { type RenderedObject, renderChart } from '../render/index.ts';
import { mountedSecret } from '../validation/render-rules.ts';
import type { AdmissionRequest } from './admission-review.ts';
import { loadEmbeddedChart } from './embedded-chart.ts';
import { releaseIdentities } from './release-identities.ts';
import { createReleaseIo } from './release-io.ts';
import { createReviewer } from './webhook.ts';

const release = `edge-${'x'.repeat(43)}-lb01`;
const namespace = 'haptic';
const helmBin = toolPath('helm');
const chart = loadEmbeddedChart();
const { objects } = await renderChart({ helmBin, release, namespace });

function component(kind: string, name: string): RenderedObject {
  const found = objects.find(
    (o) => o.kind === kind && o.metadata.labels['app.kubernetes.io/component'] === name,
  );
  if (found === undefined) throw new Error(`the chart rendered no ${kind} ${name}`);
  return found;
}

const valuesSecret = component('Secret', 'pre-rollout').metadata.name;
const identities = releaseIdentities(release, namespace, chart);
const review = createReviewer({
  release: {
    name: release,
    namespace,
    chart,
    io: createReleaseIo({ release, namespace, helmBin }),
  },
  ...(identities === undefined ? {} : { identities }),
});

function create(name: string, values: string): AdmissionRequest {
  return {
    uid: `uid-${name}`,
    kind: { group: '', version: 'v1', kind: 'Secret' },
    name,
    namespace,
    operation: 'CREATE',
    username: 'tester',
    object: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace,
        annotations: { 'haptic.haproxy.org/chart-version': chart.version },
      },
      data: { 'values.yaml': Buffer.from(values).toString('base64') },
    },
    oldObject: null,
    dryRun: true,
  };
}

describe('webhook routes for a 53-character release name', () => {
  it('validates the values Secret under its rendered name', async () => {
    expect(release).toHaveLength(53);
    expect(valuesSecret.length).toBeLessThanOrEqual(63);
    const answer = await review(create(valuesSecret, 'unknown: 1\n'));
    expect(answer).toMatchObject({
      allowed: false,
      status: {
        message: expect.stringContaining('unknown is not a value of this chart') as string,
      },
    });
    const valid = await review(create(valuesSecret, 'controller:\n  replicas: 2\n'));
    expect(valid.allowed).toBe(true);
  });

  it('leaves a Secret under the plainly truncated name alone', async () => {
    const truncated = `${release}-haptic-pre-rollout-values`.slice(0, 63);
    expect(truncated).not.toBe(valuesSecret);
    expect(await review(create(truncated, 'unknown: 1\n'))).toEqual({
      uid: `uid-${truncated}`,
      allowed: true,
    });
  });

  it('guards the identity Secrets the rendered Deployments mount', () => {
    expect(identities).toMatchObject({
      serverSecret: mountedSecret(component('Deployment', 'loadbalancer'), 'agent-tls'),
      clientSecret: mountedSecret(component('Deployment', 'controller'), 'agent-tls'),
    });
  });
});
