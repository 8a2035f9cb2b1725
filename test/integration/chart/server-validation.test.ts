import { describe, expect, it } from 'vitest';
import { toolPath } from '../../../dev/lib/tools.ts';
import { type RenderedObject, renderChart } from '../../../src/render/index.ts';
import { createTestNamespace, kubectl, serviceAccountKubeconfig } from '../../support/cluster.ts';
import { type ChartMode, chartModes } from '../../unit/chart/chart-fixtures.ts';

/** cert-manager's kinds need its CRDs, which this control plane does not have. */
const withoutCertManager = (objects: readonly RenderedObject[]) =>
  objects.filter((o) => !o.apiVersion.startsWith('cert-manager.io/'));

async function render(namespace: string, values: Readonly<Record<string, unknown>>) {
  const { objects } = await renderChart({
    helmBin: toolPath('helm'),
    release: 'haptic',
    namespace,
    values,
    includeCrds: true,
  });
  return objects;
}

function asList(objects: readonly RenderedObject[]): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects.map((o) => o.body) });
}

const modes: readonly ChartMode[] = [
  'default',
  'external',
  'legacy',
  'gitops external certificates',
  'gitops cert-manager',
  'cert-manager',
];

describe('rendered objects against the real API server', () => {
  it.each(modes)('are all accepted by kubectl apply --dry-run=server in %s mode', async (mode) => {
    const ns = await createTestNamespace('chart-dry-run');
    const objects = withoutCertManager(await render(ns, chartModes[mode]));
    // Server-side apply: objects other tests installed for real (the CRD) are compared, not
    // annotated.
    const result = await kubectl(
      [
        'apply',
        '--dry-run=server',
        '--server-side',
        '--force-conflicts',
        '--field-manager=chart-test',
        '-f',
        '-',
      ],
      asList(objects),
    );
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n')).toHaveLength(objects.length);
  });

  it.each([
    ['the Pod network of both families', { podCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56'] }],
    [
      'API server addresses and more webhook peers',
      {
        apiServerCIDRs: ['192.0.2.10/32', '2001:db8::10/128'],
        webhookFrom: [{ ipBlock: { cidr: '10.244.0.1/32' } }],
        metricsFrom: [{ namespaceSelector: { matchLabels: { team: 'monitoring' } } }],
      },
    ],
  ])('accepts the NetworkPolicies and the client-CA mount with %s', async (_, networkPolicy) => {
    const ns = await createTestNamespace('chart-network-policy');
    const objects = (
      await render(ns, {
        controller: {
          webhook: { certManager: { enabled: true }, clientAuth: { caSecretName: 'client-ca' } },
          networkPolicy,
        },
        haproxy: {
          networkPolicy: {
            extraIngress: [{ ports: [{ port: 8404, protocol: 'TCP' }, { port: 'stats' }] }],
          },
        },
      })
    ).filter((o) => o.kind === 'NetworkPolicy' || o.kind === 'Deployment');
    // The controller's, HAProxy's and the hook Jobs' (jobs.networkPolicy) policies.
    expect(objects.map((o) => o.kind).sort()).toEqual([
      'Deployment',
      'Deployment',
      'NetworkPolicy',
      'NetworkPolicy',
      'NetworkPolicy',
    ]);
    const result = await kubectl(['apply', '--dry-run=server', '-f', '-'], asList(objects));
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });

  it('lets the renewal Job create Secrets and touch only the three named ones', async () => {
    const ns = await createTestNamespace('chart-renewal-rbac');
    const objects = (await render(ns, {})).filter(
      (o) =>
        o.metadata.name === 'haptic-agent-renewal' &&
        ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind),
    );
    expect(objects).toHaveLength(3);
    expect((await kubectl(['apply', '-f', '-'], asList(objects))).exitCode).toBe(0);
    const asRenewal = [
      '-n',
      ns,
      '--kubeconfig',
      await serviceAccountKubeconfig(ns, 'haptic-agent-renewal'),
    ];
    const create = (name: string) =>
      kubectl(['create', 'secret', 'generic', name, '--from-literal=k=v', ...asRenewal]);
    expect((await create('haptic-agent-server-tls')).exitCode).toBe(0);
    expect(
      (await kubectl(['get', 'secret', 'haptic-agent-server-tls', ...asRenewal])).exitCode,
    ).toBe(0);
    const patch = await kubectl([
      'patch',
      'secret',
      'haptic-agent-server-tls',
      '--type=merge',
      '-p',
      '{"stringData":{"k":"w"}}',
      ...asRenewal,
    ]);
    expect(patch.exitCode).toBe(0);
    // Anything else is out of reach, even a Secret it created itself under another name.
    expect((await create('unrelated')).exitCode).toBe(0);
    for (const args of [
      ['get', 'secret', 'unrelated'],
      ['get', 'secrets'],
      ['delete', 'secret', 'haptic-agent-server-tls'],
    ]) {
      const denied = await kubectl([...args, ...asRenewal]);
      expect(denied.exitCode, args.join(' ')).not.toBe(0);
      expect(denied.stderr).toContain('forbidden');
    }
  });

  it('gives the pre-rollout Job read access to the named Secrets only', async () => {
    const ns = await createTestNamespace('chart-preflight-rbac');
    const objects = (await render(ns, { credentials: { existingSecret: 'creds' } })).filter(
      (o) =>
        o.metadata.name === 'haptic-haptic-pre-rollout' &&
        ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind),
    );
    expect((await kubectl(['apply', '-f', '-'], asList(objects))).exitCode).toBe(0);
    for (const name of ['creds', 'haptic-agent-ca', 'other']) {
      expect((await kubectl(['create', 'secret', 'generic', name, '-n', ns])).exitCode).toBe(0);
    }
    const asPreflight = [
      '-n',
      ns,
      '--kubeconfig',
      await serviceAccountKubeconfig(ns, 'haptic-haptic-pre-rollout'),
    ];
    expect((await kubectl(['get', 'secret', 'creds', ...asPreflight])).exitCode).toBe(0);
    expect((await kubectl(['get', 'secret', 'haptic-agent-ca', ...asPreflight])).exitCode).toBe(0);
    for (const args of [
      ['get', 'secret', 'other'],
      ['create', 'secret', 'generic', 'new'],
      ['patch', 'secret', 'creds', '--type=merge', '-p', '{"stringData":{"k":"v"}}'],
    ]) {
      const denied = await kubectl([...args, ...asPreflight]);
      expect(denied.exitCode, args.join(' ')).not.toBe(0);
      expect(denied.stderr).toContain('forbidden');
    }
  });
});
