/**
 * What the chart exposes of the controller: its RBAC over Secrets (no cluster-wide get, the
 * issuer Secret never mounted), the NetworkPolicy for its ports, and the admission
 * registration of the one HAProxyTemplateConfig it renders.
 */
import { describe, expect, it } from 'vitest';
import type { RenderedObject } from '../../../src/render/index.ts';
import {
  type ChartMode,
  chartDir,
  chartModeNames,
  chartModes,
  findObject,
  helmBinaries,
  renderMode,
  runHelm,
  writeValuesFile,
} from './chart-fixtures.ts';

interface PolicyRule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly verbs: readonly string[];
}

function rulesOf(object: RenderedObject): readonly PolicyRule[] {
  return (object.body as { rules?: readonly PolicyRule[] }).rules ?? [];
}

/** The verbs on core Secrets a role grants (resourceNames noted). */
function secretVerbs(object: RenderedObject): string[] {
  return rulesOf(object)
    .filter((rule) => rule.apiGroups?.includes('') && rule.resources?.includes('secrets'))
    .flatMap((rule) =>
      rule.verbs.map((verb) =>
        rule.resourceNames === undefined ? verb : `${verb} ${rule.resourceNames.join(',')}`,
      ),
    );
}

interface Container {
  readonly name: string;
  readonly args?: readonly string[];
  readonly ports?: readonly { readonly name: string; readonly containerPort: number }[];
}

interface PodSpec {
  readonly containers: readonly Container[];
  readonly volumes?: readonly Record<string, unknown>[];
}

function podSpec(objects: readonly RenderedObject[], name: string): PodSpec {
  return (findObject(objects, 'Deployment', name).body as { spec: { template: { spec: PodSpec } } })
    .spec.template.spec;
}

const issuerModes: readonly [ChartMode, string][] = [
  ['default', 'haptic-agent-ca'],
  ['cert-manager', 'haptic-agent-ca'],
  ['cert-manager switch', 'haptic-cm-issuer'],
];

describe.each(helmBinaries)('the controller as the chart exposes it (%s)', (binary) => {
  it.each(chartModeNames)(
    'grants list and watch on Secrets cluster-wide, get only in the release namespace (%s)',
    async (mode) => {
      const objects = await renderMode(binary, chartModes[mode]);
      expect(secretVerbs(findObject(objects, 'ClusterRole', 'haptic-haptic-controller'))).toEqual([
        'list',
        'watch',
      ]);
      const role = findObject(objects, 'Role', 'haptic-controller');
      expect(role.metadata.namespace).toBe('haptic');
      expect(secretVerbs(role)).toEqual(['get']);
      const binding = findObject(objects, 'ClusterRoleBinding', 'haptic-haptic-controller');
      expect(binding.body).toMatchObject({
        roleRef: { kind: 'ClusterRole', name: 'haptic-haptic-controller' },
        subjects: [{ kind: 'ServiceAccount', name: 'haptic-controller', namespace: 'haptic' }],
      });
    },
  );

  it.each(issuerModes)(
    'never mounts the issuer Secret into a Deployment (%s)',
    async (mode, issuer) => {
      const objects = await renderMode(binary, chartModes[mode]);
      for (const deployment of ['haptic-controller', 'haptic-haproxy']) {
        expect(JSON.stringify(podSpec(objects, deployment).volumes ?? [])).not.toContain(
          `"${issuer}"`,
        );
      }
    },
  );

  it('renders no NetworkPolicy by default', async () => {
    const objects = await renderMode(binary, chartModes.default);
    expect(objects.filter((object) => object.kind === 'NetworkPolicy')).toEqual([]);
  });

  it('opens the webhook to the API server only, and health and metrics to the peers given', async () => {
    const monitoring = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    };
    const objects = await renderMode(binary, {
      controller: {
        networkPolicy: {
          enabled: true,
          apiServerCIDRs: ['10.0.0.10/32', 'fd00::10/128'],
          metricsFrom: [monitoring],
        },
      },
    });
    const policy = findObject(objects, 'NetworkPolicy', 'haptic-controller');
    expect(policy.metadata.namespace).toBe('haptic');
    expect(policy.body.spec).toEqual({
      podSelector: {
        matchLabels: {
          'app.kubernetes.io/name': 'haptic',
          'app.kubernetes.io/instance': 'haptic',
          'app.kubernetes.io/component': 'controller',
        },
      },
      policyTypes: ['Ingress'],
      ingress: [
        {
          ports: [{ port: 'webhook', protocol: 'TCP' }],
          from: [{ ipBlock: { cidr: '10.0.0.10/32' } }, { ipBlock: { cidr: 'fd00::10/128' } }],
        },
        { ports: [{ port: 'metrics', protocol: 'TCP' }], from: [monitoring] },
      ],
    });
    // The policy selects the controller pods and names ports they have.
    const deployment = findObject(objects, 'Deployment', 'haptic-controller');
    const labels = (deployment.body as { spec: { template: { metadata: { labels: object } } } })
      .spec.template.metadata.labels;
    expect(labels).toMatchObject(
      (policy.body.spec as { podSelector: { matchLabels: object } }).podSelector.matchLabels,
    );
    const controller = podSpec(objects, 'haptic-controller').containers.find(
      (container) => container.name === 'controller',
    );
    expect(controller?.ports?.map((port) => [port.name, port.containerPort])).toEqual(
      expect.arrayContaining([
        ['webhook', 9443],
        ['health', 8080],
        ['metrics', 9090],
      ]),
    );
  });

  it('lets health through to the peers given', async () => {
    const prober = { podSelector: { matchLabels: { app: 'prober' } } };
    const objects = await renderMode(binary, {
      controller: {
        networkPolicy: { enabled: true, apiServerCIDRs: ['10.0.0.10/32'], healthFrom: [prober] },
      },
    });
    const spec = findObject(objects, 'NetworkPolicy', 'haptic-controller').body.spec as {
      ingress: unknown[];
    };
    expect(spec.ingress[1]).toEqual({
      ports: [{ port: 'health', protocol: 'TCP' }],
      from: [prober],
    });
  });

  it.each([
    [
      'enabled without API server addresses',
      { enabled: true },
      "at '/controller/networkPolicy/apiServerCIDRs'",
    ],
    [
      'an address that is not a CIDR',
      { enabled: true, apiServerCIDRs: ['10.0.0.10'] },
      "at '/controller/networkPolicy/apiServerCIDRs/0'",
    ],
    [
      'a peer that is not a NetworkPolicyPeer',
      { enabled: true, apiServerCIDRs: ['10.0.0.10/32'], metricsFrom: [{ pods: 'all' }] },
      "at '/controller/networkPolicy/metricsFrom/0'",
    ],
  ])('refuses a NetworkPolicy with %s', async (_, networkPolicy, where) => {
    const file = writeValuesFile({ controller: { networkPolicy } });
    const result = await runHelm(binary, [
      'template',
      'haptic',
      chartDir,
      '-n',
      'haptic',
      '-f',
      file,
    ]);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain(where);
  });

  it.each([
    [{}, 'haptic'],
    [{ templateConfig: { create: false, name: 'edge-config' } }, 'edge-config'],
  ])(
    'registers only the configured HAProxyTemplateConfig for admission (%j)',
    async (extra, name) => {
      const objects = await renderMode(binary, {
        controller: { ...chartModes['gitops cert-manager'].controller, ...extra },
      });
      const { webhooks } = findObject(
        objects,
        'ValidatingWebhookConfiguration',
        'haptic-haptic-webhook',
      ).body as {
        webhooks: readonly { name: string; namespaceSelector: unknown; matchConditions: unknown }[];
      };
      const templateConfigs = webhooks.find(
        (webhook) => webhook.name === 'haproxytemplateconfigs.haptic.haproxy.org',
      );
      expect(templateConfigs?.namespaceSelector).toEqual({
        matchLabels: { 'kubernetes.io/metadata.name': 'haptic' },
      });
      expect(templateConfigs?.matchConditions).toEqual([
        { name: 'release-template-config', expression: `request.name == "${name}"` },
      ]);
      const controller = podSpec(objects, 'haptic-controller').containers.find(
        (container) => container.name === 'controller',
      );
      expect(controller?.args).toContain(`--template-config=${name}`);
    },
  );
});
