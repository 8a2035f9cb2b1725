/**
 * A first install the pre-rollout Job rejects leaves a `failed` release, and `helm install`
 * then refuses the name. The Job's output says what to do: fix the cause, then
 * `helm upgrade --install` (or `helm uninstall` first); this test follows that advice.
 */
import { describe, expect, it } from 'vitest';
import { embeddedChartDir } from '../../../src/render/index.ts';
import {
  createTestNamespace,
  eventArrival,
  helm,
  jobLog,
  jobOutcomes,
  kubectl,
} from '../../support/cluster.ts';

const chart = embeddedChartDir();

describe('a rejected first install', () => {
  it('says how to retry, and helm upgrade --install with the cause fixed succeeds', async () => {
    const ns = await createTestNamespace('chart-rejected');
    const base = [
      chart,
      '-n',
      ns,
      '--timeout',
      '120s',
      '--set',
      `ingressClass.name=${ns}`,
      '--set',
      'credentials.existingSecret=dataplane-credentials',
    ];
    const rejected = await helm(['install', 'haptic', ...base]);
    expect(rejected.exitCode).not.toBe(0);
    expect(rejected.stderr).toContain('haptic-haptic-pre-rollout');
    const log = await jobLog(ns, 'haptic-haptic-pre-rollout');
    expect(log).toContain(
      `ERROR CredentialsSecretMissing (credentials.existingSecret): credentials.existingSecret names Secret ${ns}/dataplane-credentials, which does not exist`,
    );
    expect(log).toContain(
      `Fix the cause named above, then retry with helm upgrade --install haptic <chart> -n ${ns} (a rejected first install leaves a failed release, and helm install cannot reuse its name), or run helm uninstall haptic -n ${ns} first.`,
    );

    // What the advice is about: the name is taken by a failed release.
    const status = await helm(['status', 'haptic', '-n', ns, '-o', 'json']);
    expect((JSON.parse(status.stdout) as { info: { status: string } }).info.status).toBe('failed');
    const again = await helm(['install', 'haptic', ...base]);
    expect(again.exitCode).not.toBe(0);
    expect(again.stderr).toContain('cannot re-use a name that is still in use');

    // Fix the cause and follow the advice.
    const created = await kubectl([
      'create',
      'secret',
      'generic',
      'dataplane-credentials',
      '-n',
      ns,
      '--from-literal=dataplane_username=admin',
      '--from-literal=dataplane_password=s3cret',
    ]);
    expect(created.exitCode).toBe(0);
    const retried = await helm(['upgrade', '--install', 'haptic', ...base]);
    expect(retried.stderr).toBe('');
    expect(retried.exitCode).toBe(0);
    await expect
      .poll(
        async () => (await jobOutcomes(ns)).filter((o) => o.job === 'haptic-haptic-pre-rollout'),
        eventArrival,
      )
      .toEqual([
        { job: 'haptic-haptic-pre-rollout', outcome: 'failed' },
        { job: 'haptic-haptic-pre-rollout', outcome: 'completed' },
      ]);
    const deployed = await helm(['status', 'haptic', '-n', ns, '-o', 'json']);
    expect((JSON.parse(deployed.stdout) as { info: { status: string } }).info.status).toBe(
      'deployed',
    );
    expect((await helm(['uninstall', 'haptic', '-n', ns])).exitCode).toBe(0);
  });
});
