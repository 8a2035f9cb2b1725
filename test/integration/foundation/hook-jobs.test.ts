import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readPackageVersion } from '../../../src/version.ts';
import {
  createTestNamespace,
  helm,
  jobLog,
  kubectl,
  runnerEntries,
} from '../../support/cluster.ts';

const chart = fileURLToPath(new URL('../../fixtures/hook-chart', import.meta.url));

describe('hook-Job runner', () => {
  for (const binary of ['helm', 'helm4'] as const) {
    it(`lets ${binary} install a chart whose pre-install hook runs haptic version`, async () => {
      const ns = await createTestNamespace(`hooks-${binary}`);
      const install = await helm(['install', 'demo', chart, '-n', ns, '--timeout', '60s'], binary);
      expect(install.stderr).toBe('');
      expect(install.exitCode).toBe(0);
      expect(runnerEntries(ns)).toEqual([
        { job: `${ns}/demo-hook`, exitCode: 0, message: 'completed' },
      ]);
      expect(jobLog(ns, 'demo-hook')).toBe(`${readPackageVersion()}\n`);
    });
  }

  it('makes helm install fail when the hook Job fails, and keeps the Job and its log', async () => {
    const ns = await createTestNamespace('hooks-fail');
    const install = await helm([
      'install',
      'broken',
      chart,
      '-n',
      ns,
      '--timeout',
      '60s',
      '--set',
      'hookArgs={no-such-command}',
    ]);
    expect(install.exitCode).not.toBe(0);
    expect(install.stderr).toMatch(/broken-hook.*failed|BackoffLimitExceeded/);
    expect(runnerEntries(ns)).toEqual([
      { job: `${ns}/broken-hook`, exitCode: 2, message: 'exited with code 2' },
    ]);
    expect(jobLog(ns, 'broken-hook')).toContain("unknown command 'no-such-command'");
    const job = await kubectl([
      'get',
      'job',
      'broken-hook',
      '-n',
      ns,
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Failed")].status}',
    ]);
    expect(job.stdout).toBe('True');
  });

  it('runs a Job created from a CronJob with kubectl create job --from', async () => {
    const ns = await createTestNamespace('hooks-cron');
    expect((await helm(['install', 'demo', chart, '-n', ns, '--timeout', '60s'])).exitCode).toBe(0);
    const created = await kubectl([
      'create',
      'job',
      'manual-run',
      '--from=cronjob/demo-periodic',
      '-n',
      ns,
    ]);
    expect(created.exitCode).toBe(0);
    const waited = await kubectl([
      'wait',
      '--for=condition=complete',
      'job/manual-run',
      '-n',
      ns,
      '--timeout=60s',
    ]);
    expect(waited.stdout).toContain('condition met');
    expect(runnerEntries(ns).map((e) => e.job)).toEqual([`${ns}/demo-hook`, `${ns}/manual-run`]);
  });

  it('fails a Job whose ServiceAccount does not exist, saying which one', async () => {
    const ns = await createTestNamespace('hooks-nosa');
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'orphan', namespace: ns },
      spec: {
        template: {
          spec: {
            serviceAccountName: 'missing-sa',
            restartPolicy: 'Never',
            containers: [
              { name: 'c', image: 'haptic', command: ['/usr/local/bin/haptic', 'version'] },
            ],
          },
        },
      },
    };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(job))).exitCode).toBe(0);
    const waited = await kubectl([
      'wait',
      '--for=condition=failed',
      'job/orphan',
      '-n',
      ns,
      '--timeout=60s',
    ]);
    expect(waited.stdout).toContain('condition met');
    expect(jobLog(ns, 'orphan')).toMatch(/TokenRequest for ServiceAccount missing-sa/);
  });
});
