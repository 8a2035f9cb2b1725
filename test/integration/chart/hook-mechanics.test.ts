import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * The chart's hook wiring (order, weights, delete policies, ServiceAccounts, the values
 * Secret volume, what a failure leaves behind) with the hook commands replaced by stand-ins:
 * `haptic version` succeeds; with haproxy.image.tag "reject" (a value no hook's image depends
 * on) the pre-rollout stand-in fails like a rejection. The commands themselves are tested by release-lifecycle.test.ts.
 */
function chartWithStandInHooks(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'chart-stand-in-')), 'haptic');
  cpSync(embeddedChartDir(), dir, { recursive: true });
  const replace = (file: string, from: RegExp, to: string) => {
    const path = join(dir, 'templates', file);
    const text = readFileSync(path, 'utf8');
    if (!from.test(text)) throw new Error(`${file} no longer matches ${String(from)}`);
    writeFileSync(path, text.replace(from, to));
  };
  replace('crds-job.yaml', /- crds\n\s+- apply\n/, '- version\n');
  replace(
    'pre-rollout-job.yaml',
    /- preflight\n(\s+- --[^\n]+\n)+/,
    '- {{ ternary "no-such-command" "version" (eq .Values.haproxy.image.tag "reject") }}\n',
  );
  replace(
    'webhook-certificate-job.yaml',
    /- certificates\n\s+- webhook\n(\s+- --[^\n]+\n)+/,
    '- version\n',
  );
  replace(
    '_certificates.tpl',
    /- certificates\n- renew\n(- --[^\n]+\n)+- --validity-days=[^\n]+/,
    '- version',
  );
  return dir;
}

/** The hook Jobs' outcomes, in order: the renewal CronJob's hourly Jobs are not hooks. */
async function hookOutcomes(ns: string) {
  return (await jobOutcomes(ns)).filter((o) => !o.job.startsWith('haptic-agent-renewal-'));
}

async function deploymentState(ns: string): Promise<string> {
  const result = await kubectl(['get', 'deployment', '-n', ns, '-o', 'json']);
  const list = JSON.parse(result.stdout) as {
    items: { metadata: { generation: number }; spec: unknown }[];
  };
  return JSON.stringify(list.items.map((d) => [d.metadata.generation, d.spec]));
}

describe.each(['helm', 'helm4'] as const)('hook wiring under %s', (binary) => {
  it('runs the hooks in order, removes them after success and keeps a rejected Job', async () => {
    const chart = chartWithStandInHooks();
    const ns = await createTestNamespace(`chart-wiring-${binary}`);
    const base = [chart, '-n', ns, '--timeout', '60s', '--set', `ingressClass.name=${ns}`];
    const completed = (job: string) => ({ job, outcome: 'completed' });
    const hooks = [
      completed('haptic-crds'),
      completed('haptic-haptic-pre-rollout'),
      completed('haptic-agent-bootstrap'),
      // The webhook's certificate, before the release's objects and again after them.
      completed('haptic-webhook-certificate'),
      completed('haptic-webhook-certificate'),
    ];

    const install = await helm(['install', 'haptic', ...base], binary);
    expect(install.exitCode).toBe(0);
    await expect.poll(() => hookOutcomes(ns), eventArrival).toEqual(hooks);
    // hook-succeeded: no Job, values Secret or hook ServiceAccount is left behind.
    expect((await kubectl(['get', 'jobs', '-n', ns, '-o', 'name'])).stdout).toBe('');
    const accounts = await kubectl(['get', 'serviceaccounts', '-n', ns, '-o', 'name']);
    expect(accounts.stdout.split('\n').sort()).toEqual([
      'serviceaccount/default',
      'serviceaccount/haptic-agent-renewal',
      'serviceaccount/haptic-controller',
      'serviceaccount/haptic-haproxy',
    ]);
    const before = await deploymentState(ns);

    const rejected = await helm(
      [
        'upgrade',
        'haptic',
        ...base,
        '--set',
        'haproxy.image.tag=reject',
        '--set',
        'controller.replicas=5',
      ],
      binary,
    );
    expect(rejected.exitCode).not.toBe(0);
    expect(rejected.stderr).toContain('haptic-haptic-pre-rollout');
    await expect
      .poll(async () => (await hookOutcomes(ns)).slice(hooks.length), eventArrival)
      .toEqual([completed('haptic-crds'), { job: 'haptic-haptic-pre-rollout', outcome: 'failed' }]);
    // The failed Job stays for `kubectl logs`; the release objects are untouched.
    expect(await jobLog(ns, 'haptic-haptic-pre-rollout')).toContain(
      "unknown command 'no-such-command'",
    );
    const job = await kubectl([
      'get',
      'job',
      'haptic-haptic-pre-rollout',
      '-n',
      ns,
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Failed")].status}',
    ]);
    expect(job.stdout).toBe('True');
    expect(await deploymentState(ns)).toBe(before);

    // A corrected forward upgrade replaces the failed Job and goes through.
    const forward = await helm(
      ['upgrade', 'haptic', ...base, '--set', 'controller.replicas=5'],
      binary,
    );
    expect(forward.exitCode).toBe(0);
    await expect
      .poll(async () => (await hookOutcomes(ns)).slice(hooks.length + 2), eventArrival)
      .toEqual(hooks);
    expect(await deploymentState(ns)).not.toBe(before);
    expect((await helm(['uninstall', 'haptic', '-n', ns], binary)).exitCode).toBe(0);
  });
});
