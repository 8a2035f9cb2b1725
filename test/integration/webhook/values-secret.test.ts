/**
 * The pre-rollout values Secret: a server-side dry run gives the pre-rollout Job's verdict.
 * Each case runs both and compares: `kubectl apply --dry-run=server` of the Secret through the
 * registered webhook, and `haptic preflight` with the same values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { readPackageVersion } from '../../../src/version.ts';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { preflight, valuesFile } from '../preflight/run-preflight.ts';
import { type RegisteredWebhook, registerWebhook } from './registered-webhook.ts';

const version = readPackageVersion();

function valuesSecret(namespace: string, values: unknown, chartVersion = version): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: 'haptic-haptic-pre-rollout-values',
      namespace,
      labels: {
        'app.kubernetes.io/instance': 'haptic',
        'app.kubernetes.io/component': 'pre-rollout',
      },
      annotations: { 'haptic.haproxy.org/chart-version': chartVersion },
    },
    stringData: { 'values.yaml': stringify(values) },
  });
}

function denial(stderr: string): string {
  const marker = 'denied the request: ';
  return stderr.includes(marker) ? stderr.slice(stderr.indexOf(marker) + marker.length).trim() : '';
}

describe('the pre-rollout values Secret through the webhook', () => {
  let ns = '';
  let hook: RegisteredWebhook | undefined;

  beforeAll(async () => {
    ns = await createTestNamespace('webhook-values');
    // A default-provider leftover under the client identity name, there before the webhook.
    const leftover = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'haptic-agent-client-tls',
        namespace: ns,
        labels: { 'haptic.haproxy.org/certificate-provider': 'default' },
      },
      data: {},
    };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(leftover))).stderr).toBe('');
    hook = await registerWebhook(ns, {
      namespace: ns,
      provider: 'default',
      issuerSecret: 'haptic-agent-ca',
      serverSecret: 'haptic-agent-server-tls',
      clientSecret: 'haptic-agent-client-tls',
      serverName: 'haptic-agent',
      clientName: 'haptic-controller',
    });
  });

  afterAll(async () => {
    await hook?.stop();
  });

  const cases: readonly (readonly [string, Record<string, unknown>, 0 | 1])[] = [
    ['valid values', {}, 0],
    ['an unknown key', { controller: { replica: 3 } }, 1],
    ['a chart value rule', { haproxy: { agent: { tls: { managed: false } } } }, 1],
    [
      'a provider switch onto an existing Secret',
      { haproxy: { agent: { tls: { certManager: { enabled: true } } } } },
      1,
    ],
  ];

  it.each(cases)('gives the Job’s verdict for %s', async (_, values, exitCode) => {
    const [dryRun, job] = await Promise.all([
      kubectl(['apply', '--dry-run=server', '-f', '-'], valuesSecret(ns, values)),
      preflight([
        '-n',
        ns,
        '-f',
        valuesFile(values),
        '--expect-chart-version',
        version,
        '--output',
        'json',
      ]),
    ]);
    expect(job.exitCode).toBe(exitCode);
    const report = JSON.parse(job.stdout) as { findings: { severity: string; message: string }[] };
    const errors = report.findings.filter((f) => f.severity === 'error').map((f) => f.message);
    if (exitCode === 0) {
      expect(dryRun.stderr).toBe('');
      expect(dryRun.stdout).toContain('(server dry run)');
    } else {
      const expected =
        errors.length === 1 ? (errors[0] ?? '') : errors.map((m) => `- ${m}`).join('\n');
      expect(denial(dryRun.stderr)).toBe(expected);
    }
  });

  it('lets values of another chart version through with a warning for its own Job', async () => {
    const result = await kubectl(
      ['apply', '--dry-run=server', '-f', '-'],
      valuesSecret(ns, { unknown: 1 }, '9.9.9'),
    );
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(
      `Warning: These values are for chart 9.9.9; this controller embeds chart ${version}`,
    );
  });
});
