import { describe, expect, it } from 'vitest';
import { toolPath } from '../../../dev/lib/tools.ts';
import { renderChart } from '../../../src/render/index.ts';
import { readPackageVersion } from '../../../src/version.ts';
import { createTestNamespace, kubectl, serviceAccountKubeconfig } from '../../support/cluster.ts';
import { preflight, valuesFile } from './run-preflight.ts';

const version = readPackageVersion();

function defaultProviderSecret(ns: string, name: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: ns,
      labels: { 'haptic.haproxy.org/certificate-provider': 'default' },
    },
    data: { 'tls.crt': '' },
  });
}

describe('haptic preflight against the real control plane', () => {
  it('accepts valid values with the live checks (exit 0)', async () => {
    const ns = await createTestNamespace('preflight-ok');
    const result = await preflight(['-n', ns, '--expect-chart-version', version]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`preflight accepted release haptic in namespace ${ns}.`);
    expect(result.exitCode).toBe(0);
  });

  it('rejects an unknown key with its exact path (exit 1)', async () => {
    const ns = await createTestNamespace('preflight-key');
    const file = valuesFile({ haproxy: { agent: { tls: { certValidityDay: 90 } } } });
    const result = await preflight(['-n', ns, '-f', file, '--expect-chart-version', version]);
    expect(result.stdout).toBe(
      'ERROR ValuesSchemaViolation (haproxy.agent.tls.certValidityDay): haproxy.agent.tls.certValidityDay is not a value of this chart: remove it or correct its spelling (values.schema.json lists every key).\n' +
        `preflight rejected release haptic in namespace ${ns}: 1 problem.`,
    );
    expect(result.exitCode).toBe(1);
  });

  it('rejects another chart version, taken from HAPTIC_EXPECT_CHART_VERSION (exit 1)', async () => {
    const ns = await createTestNamespace('preflight-version');
    const result = await preflight(['-n', ns], { HAPTIC_EXPECT_CHART_VERSION: '9.9.9' });
    expect(result.stdout).toContain(
      `ERROR ChartVersionMismatch (--expect-chart-version): Chart version 9.9.9 is being installed, but this haptic image embeds chart ${version}`,
    );
    expect(result.exitCode).toBe(1);
  });

  it('rejects a provider switch onto the existing Secrets (exit 1), and accepts new names', async () => {
    const ns = await createTestNamespace('preflight-switch');
    for (const name of ['haptic-agent-ca', 'haptic-agent-server-tls', 'haptic-agent-client-tls']) {
      expect((await kubectl(['apply', '-f', '-'], defaultProviderSecret(ns, name))).exitCode).toBe(
        0,
      );
    }
    const switched = valuesFile({
      haproxy: { agent: { tls: { certManager: { enabled: true } } } },
    });
    const rejected = await preflight([
      '-n',
      ns,
      '-f',
      switched,
      '--expect-chart-version',
      version,
      '--output',
      'json',
    ]);
    expect(rejected.exitCode).toBe(1);
    const report = JSON.parse(rejected.stdout) as {
      allowed: boolean;
      findings: { code: string; path: string; message: string }[];
    };
    expect(report.allowed).toBe(false);
    expect(report.findings.map((f) => [f.code, f.path])).toEqual([
      ['ProviderTakeover', 'haproxy.agent.tls.issuerSecretName'],
      ['ProviderTakeover', 'haproxy.agent.tls.serverSecretName'],
      ['ProviderTakeover', 'haproxy.agent.tls.clientSecretName'],
    ]);
    expect(report.findings[1]?.message).toBe(
      `haproxy.agent.tls.serverSecretName names Secret ${ns}/haptic-agent-server-tls, which is managed by the default provider (the renewal Job) (label haptic.haproxy.org/certificate-provider=default); this release would manage it with cert-manager. ` +
        "A provider must not take over another provider's Secret: use new Secret names when changing providers, and keep the old Secrets until haptic-controller and haptic-haproxy are ready.",
    );

    // The guide's switch: new issuer and identity Secret names.
    const renamed = valuesFile({
      haproxy: {
        agent: {
          tls: {
            certManager: { enabled: true },
            issuerSecretName: 'haptic-cm-issuer',
            serverSecretName: 'haptic-cm-agent',
            clientSecretName: 'haptic-cm-controller',
          },
        },
      },
    });
    const accepted = await preflight([
      '-n',
      ns,
      '-f',
      switched,
      '-f',
      renamed,
      '--expect-chart-version',
      version,
    ]);
    expect(accepted.stdout).toBe(`preflight accepted release haptic in namespace ${ns}.`);
    expect(accepted.exitCode).toBe(0);
  });

  it('says so and still validates without the cluster (--offline)', async () => {
    const result = await preflight(['--offline', '--expect-chart-version', version], {
      KUBECONFIG: '/nonexistent',
    });
    expect(result.stdout).toContain(
      'WARNING LiveChecksSkipped (--offline): Live checks were skipped (offline)',
    );
    expect(result.exitCode).toBe(0);
  });

  it('exits 2 when the cluster refuses the reads, naming the permission', async () => {
    const ns = await createTestNamespace('preflight-rbac');
    expect((await kubectl(['create', 'serviceaccount', 'nobody', '-n', ns])).exitCode).toBe(0);
    const result = await preflight(['-n', ns, '--expect-chart-version', version], {
      KUBECONFIG: await serviceAccountKubeconfig(ns, 'nobody'),
    });
    expect(result.stdout).toBe('');
    // Reads run at once: whichever is refused first is named (the issuer is read as metadata):
    // an agent identity Secret, or the webhook's.
    expect(result.stderr).toMatch(
      new RegExp(
        `^haptic preflight: The Kubernetes API refused to read (the metadata of )?Secret ${ns}/haptic-(agent-\\S+|webhook-default-tls) \\(HTTP 403: .*; grant this ServiceAccount the permission`,
      ),
    );
    expect(result.exitCode).toBe(2);
  });

  it("runs within the chart's read-only pre-rollout RBAC", async () => {
    const ns = await createTestNamespace('preflight-sa');
    const values = { credentials: { existingSecret: 'creds' } };
    const { objects } = await renderChart({ helmBin: toolPath('helm'), namespace: ns, values });
    const rbac = objects
      .filter((o) => o.metadata.name === 'haptic-haptic-pre-rollout')
      .filter((o) => ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind))
      .map((o) => o.body);
    expect(rbac).toHaveLength(3);
    const applied = await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: rbac }),
    );
    expect(applied.stderr).toBe('');
    const created = await kubectl([
      'create',
      'secret',
      'generic',
      'creds',
      '-n',
      ns,
      '--from-literal=dataplane_username=admin',
      '--from-literal=dataplane_password=secret',
    ]);
    expect(created.exitCode).toBe(0);
    const result = await preflight(
      ['-n', ns, '-f', valuesFile(values), '--expect-chart-version', version],
      {
        KUBECONFIG: await serviceAccountKubeconfig(ns, 'haptic-haptic-pre-rollout'),
      },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`preflight accepted release haptic in namespace ${ns}.`);
  });

  it('exits 2 on a usage error', async () => {
    const result = await preflight(['--output', 'xml']);
    expect(result.stderr).toContain("option '--output <format>' argument 'xml' is invalid");
    expect(result.exitCode).toBe(2);
  });
});
