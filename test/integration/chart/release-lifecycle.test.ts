import { describe, expect, it } from 'vitest';
import { embeddedChartDir } from '../../../src/render/index.ts';
import { runCheckExpiry } from '../../support/check-expiry.ts';
import {
  createTestNamespace,
  eventArrival,
  helm,
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

/** The Secrets the hooks create: the agent identities and the webhook's serving certificate. */
const runtimeSecrets = [
  'haptic-agent-ca',
  'haptic-agent-server-tls',
  'haptic-agent-client-tls',
  'haptic-webhook-default-tls',
];

/** The caBundle of every webhook of the release's registration, which the hook Job sets. */
async function registeredCaBundles(ns: string): Promise<string[]> {
  const result = await kubectl([
    ...['get', 'validatingwebhookconfiguration', `${ns}-haptic-webhook`],
    ...['-o', 'jsonpath={.webhooks[*].clientConfig.caBundle}'],
  ]);
  expect(result.stderr).toBe('');
  return result.stdout.split(' ');
}

/** ca.crt of the webhook's serving certificate Secret, base64 as a caBundle is. */
async function webhookCa(ns: string): Promise<string> {
  const result = await kubectl([
    ...['get', 'secret', 'haptic-webhook-default-tls', '-n', ns],
    ...['-o', 'jsonpath={.data.ca\\.crt}'],
  ]);
  expect(result.stderr).toBe('');
  return result.stdout;
}

describe.each(binaries)('release objects installed by %s (hooks not run)', (binary) => {
  it('install, unchanged upgrade and uninstall keep pod templates and runtime Secrets', async () => {
    const ns = await createTestNamespace(`chart-${binary}`);
    // No webhook: without its hook nothing issues the webhook's certificate, and the
    // registration (failing closed on the agent identity Secrets) would refuse the Secret below.
    const base = [
      ...[chart, '-n', ns, '--no-hooks', '--set', `ingressClass.name=${ns}`],
      ...['--set', 'controller.webhook.enabled=false'],
    ];
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
          // The webhook's serving certificate, before the release's objects and after them.
          { job: 'haptic-webhook-certificate', outcome: 'completed' },
          { job: 'haptic-webhook-certificate', outcome: 'completed' },
        ]);
      const secrets = await secretData(ns, runtimeSecrets);
      // The registration trusts the CA the hook issued the webhook's certificate from.
      const ca = await webhookCa(ns);
      expect(ca).not.toBe('');
      expect(new Set(await registeredCaBundles(ns))).toEqual(new Set([ca]));

      // An unchanged upgrade reruns the hooks but changes neither Secrets nor pod templates.
      const templates = await deploymentState(ns);
      expect((await helm(['upgrade', 'haptic', ...base], binary)).exitCode).toBe(0);
      await expect.poll(() => jobOutcomes(ns), eventArrival).toHaveLength(10);
      expect(await secretData(ns, runtimeSecrets)).toBe(secrets);
      expect(new Set(await registeredCaBundles(ns))).toEqual(new Set([ca]));
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
      // The release's own webhook (on by default) answers with the shared validator's verdict
      // when helm creates the pre-rollout hook's values Secret: helm prints it, no Job runs.
      expect(rejected.stderr).toContain(
        'admission webhook "pre-rollout-values.haptic.haproxy.org" denied the request',
      );
      expect(rejected.stderr).toMatch(/use new Secret names when changing providers/);
      expect(await deploymentState(ns)).toBe(templates);

      // A corrected forward upgrade succeeds.
      expect((await helm(['upgrade', 'haptic', ...base], binary)).exitCode).toBe(0);

      // Uninstall leaves the runtime-created Secrets.
      expect((await helm(['uninstall', 'haptic', '-n', ns], binary)).exitCode).toBe(0);
      expect(await secretData(ns, runtimeSecrets)).toBe(secrets);
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
