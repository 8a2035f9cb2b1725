import { describe, expect, it } from 'vitest';
import { embeddedChartDir } from '../../../src/render/index.ts';
import { runCheckExpiry } from '../../support/check-expiry.ts';
import {
  createTestNamespace,
  eventArrival,
  helm,
  jobLog,
  jobOutcomes,
  kubectl,
} from '../../support/cluster.ts';

const chart = embeddedChartDir();
const binaries = ['helm', 'helm4'] as const;

/** Pod templates and generations of both Deployments, to compare across upgrades. */
async function deploymentState(ns: string): Promise<string> {
  const result = await kubectl([
    'get',
    'deployment',
    'haptic-controller',
    'haptic-haproxy',
    '-n',
    ns,
    '-o',
    'json',
  ]);
  expect(result.exitCode).toBe(0);
  const list = JSON.parse(result.stdout) as {
    items: { metadata: { generation: number }; spec: { template: unknown } }[];
  };
  return JSON.stringify(list.items.map((d) => [d.metadata.generation, d.spec.template]));
}

/** Secret data by name, to compare across upgrades. */
async function secretData(ns: string, names: readonly string[]): Promise<string> {
  const result = await kubectl(['get', 'secret', ...names, '-n', ns, '-o', 'json']);
  expect(result.stderr).toBe('');
  const list = JSON.parse(result.stdout) as { items: { data: unknown }[] };
  return JSON.stringify(list.items.map((s) => s.data));
}

const identitySecrets = ['haptic-agent-ca', 'haptic-agent-server-tls', 'haptic-agent-client-tls'];

describe.each(binaries)('release objects installed by %s (hooks not run)', (binary) => {
  it('install, unchanged upgrade and uninstall keep pod templates and runtime Secrets', async () => {
    const ns = await createTestNamespace(`chart-${binary}`);
    const base = [chart, '-n', ns, '--no-hooks', '--set', `ingressClass.name=${ns}`];
    const install = await helm(['install', 'haptic', ...base], binary);
    expect(install.stderr).toBe('');
    expect(install.exitCode).toBe(0);
    expect(
      (await kubectl(['get', 'crd', 'haproxytemplateconfigs.haproxy-haptic.org'])).exitCode,
    ).toBe(0);
    // What the bootstrap Job would create: owned by no release.
    expect(
      (
        await kubectl([
          'create',
          'secret',
          'generic',
          'haptic-agent-ca',
          '-n',
          ns,
          '--from-literal=ca.key=k',
        ])
      ).exitCode,
    ).toBe(0);
    const before = await deploymentState(ns);
    const upgrade = await helm(['upgrade', 'haptic', ...base], binary);
    expect(upgrade.exitCode).toBe(0);
    expect(await deploymentState(ns)).toBe(before);
    const uninstall = await helm(['uninstall', 'haptic', '-n', ns], binary);
    expect(uninstall.exitCode).toBe(0);
    expect((await kubectl(['get', 'deployment', 'haptic-controller', '-n', ns])).exitCode).not.toBe(
      0,
    );
    expect((await kubectl(['get', 'secret', 'haptic-agent-ca', '-n', ns])).exitCode).toBe(0);
    expect(
      (await kubectl(['get', 'crd', 'haproxytemplateconfigs.haproxy-haptic.org'])).exitCode,
    ).toBe(0);
  });
});

describe('release lifecycle with hooks run as Jobs', () => {
  it.each(binaries)(
    '%s install runs the hooks in order and creates the identities',
    async (binary) => {
      const ns = await createTestNamespace(`chart-hooks-${binary}`);
      const base = [chart, '-n', ns, '--timeout', '120s', '--set', `ingressClass.name=${ns}`];
      const install = await helm(['install', 'haptic', ...base], binary);
      expect(install.stderr).toBe('');
      expect(install.exitCode).toBe(0);
      await expect
        .poll(() => jobOutcomes(ns), eventArrival)
        .toEqual([
          { job: 'haptic-crds', outcome: 'completed' },
          { job: 'haptic-haptic-pre-rollout', outcome: 'completed' },
          { job: 'haptic-agent-bootstrap', outcome: 'completed' },
        ]);
      const secrets = await secretData(ns, identitySecrets);

      // An unchanged upgrade reruns the hooks but changes neither Secrets nor pod templates.
      const templates = await deploymentState(ns);
      expect((await helm(['upgrade', 'haptic', ...base], binary)).exitCode).toBe(0);
      await expect.poll(() => jobOutcomes(ns), eventArrival).toHaveLength(6);
      expect(await secretData(ns, identitySecrets)).toBe(secrets);
      expect(await deploymentState(ns)).toBe(templates);

      // A provider switch onto the existing Secrets (external mode taking over the default
      // provider's identities; cert-manager would need its CRDs here) is rejected before
      // anything changes.
      const rejected = await helm(
        [
          'upgrade',
          'haptic',
          ...base,
          '--set',
          'haproxy.agent.tls.managed=false',
          '--set',
          'haproxy.agent.tls.serverSecretName=haptic-agent-server-tls',
          '--set',
          'haproxy.agent.tls.clientSecretName=haptic-agent-client-tls',
        ],
        binary,
      );
      expect(rejected.exitCode).not.toBe(0);
      await expect
        .poll(async () => (await jobOutcomes(ns)).at(-1), eventArrival)
        .toEqual({
          job: 'haptic-haptic-pre-rollout',
          outcome: 'failed',
        });
      // The guide's `kubectl logs job/haptic-haptic-pre-rollout`.
      expect(await jobLog(ns, 'haptic-haptic-pre-rollout')).toMatch(/new Secret names/);
      expect(await deploymentState(ns)).toBe(templates);
      expect((await kubectl(['get', 'job', 'haptic-haptic-pre-rollout', '-n', ns])).exitCode).toBe(
        0,
      );

      // A corrected forward upgrade succeeds.
      expect((await helm(['upgrade', 'haptic', ...base], binary)).exitCode).toBe(0);

      // Uninstall leaves the runtime-created Secrets.
      expect((await helm(['uninstall', 'haptic', '-n', ns], binary)).exitCode).toBe(0);
      expect(await secretData(ns, identitySecrets)).toBe(secrets);
    },
    // Four helm runs, each waiting for its hook Jobs' Pods on a shared two-core machine.
    300_000,
  );

  it("passes the spec's Check expiry script verbatim after a helm install in namespace haptic", async () => {
    const created = await kubectl(['create', 'namespace', 'haptic']);
    expect(created.exitCode).toBe(0);
    const started = performance.now();
    const install = await helm(['install', 'haptic', chart, '-n', 'haptic', '--timeout', '120s']);
    expect(install.exitCode).toBe(0);
    // Both Deployments roll out on the node: real Pods, two replicas each.
    for (const deployment of ['haptic-controller', 'haptic-haproxy']) {
      const rollout = await kubectl([
        'rollout',
        'status',
        `deployment/${deployment}`,
        '-n',
        'haptic',
        '--timeout=180s',
      ]);
      expect(rollout.stdout).toContain('successfully rolled out');
    }
    process.stdout.write(
      `helm install to all Pods Ready: ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
    const result = await runCheckExpiry();
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('haptic-agent-server-tls tls.crt: notAfter=');
  }, 240_000);
});
