/**
 * What the chart exposes of the controller: its RBAC over Secrets (no cluster-wide get, the
 * issuer Secret never mounted), the NetworkPolicies for its ports and the HAProxy pods' (on by
 * default), client-certificate authentication of the webhook's callers, and the admission
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
  readonly volumeMounts?: readonly Record<string, unknown>[];
  readonly ports?: readonly { readonly name: string; readonly containerPort: number }[];
}

interface PodSpec {
  readonly initContainers?: readonly Container[];
  readonly containers: readonly Container[];
  readonly volumes?: readonly Record<string, unknown>[];
}

function podSpec(objects: readonly RenderedObject[], name: string): PodSpec {
  return (findObject(objects, 'Deployment', name).body as { spec: { template: { spec: PodSpec } } })
    .spec.template.spec;
}

function podLabels(objects: readonly RenderedObject[], name: string): object {
  return (
    findObject(objects, 'Deployment', name).body as {
      spec: { template: { metadata: { labels: object } } };
    }
  ).spec.template.metadata.labels;
}

/** The ingress rules of the controller's NetworkPolicy. */
function ingressOf(objects: readonly RenderedObject[]): unknown {
  return (
    findObject(objects, 'NetworkPolicy', 'haptic-controller').body.spec as { ingress: unknown }
  ).ingress;
}

const selectorLabels = {
  'app.kubernetes.io/name': 'haptic',
  'app.kubernetes.io/instance': 'haptic',
};
const controllerLabels = { ...selectorLabels, 'app.kubernetes.io/component': 'controller' };
const haproxyLabels = { ...selectorLabels, 'app.kubernetes.io/component': 'loadbalancer' };

/** A webhook with a serving certificate, so the controller serves :9443. */
const servedWebhook = { webhook: { certManager: { enabled: true } } };

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

  it('opens only the webhook port by default, and no port at all without a webhook', async () => {
    const objects = await renderMode(binary, chartModes.default);
    const policy = findObject(objects, 'NetworkPolicy', 'haptic-controller');
    expect(policy.metadata.namespace).toBe('haptic');
    // Neither apiServerCIDRs nor podCIDRs: the chart cannot tell the API server from a Pod.
    expect(policy.body.spec).toEqual({
      podSelector: { matchLabels: controllerLabels },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ ports: [{ port: 'webhook', protocol: 'TCP' }] }],
      // Outbound: anywhere, the API server's address being the cluster's.
      egress: [{}],
    });
    const closed = await renderMode(binary, { controller: { webhook: { enabled: false } } });
    expect(findObject(closed, 'NetworkPolicy', 'haptic-controller').body.spec).toEqual({
      podSelector: { matchLabels: controllerLabels },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [{}],
    });
    // The policy selects the controller pods and names ports they have.
    const deployment = findObject(objects, 'Deployment', 'haptic-controller');
    const labels = (deployment.body as { spec: { template: { metadata: { labels: object } } } })
      .spec.template.metadata.labels;
    expect(labels).toMatchObject(controllerLabels);
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

  it('opens a served webhook to every source while neither apiServerCIDRs nor the Pod network says who the API server is', async () => {
    const objects = await renderMode(binary, chartModes['gitops cert-manager']);
    expect(ingressOf(objects)).toEqual([{ ports: [{ port: 'webhook', protocol: 'TCP' }] }]);
  });

  it('opens the webhook to the API server only, and health and metrics to the peers given', async () => {
    const monitoring = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    };
    const tunnel = { ipBlock: { cidr: '10.244.0.1/32' } };
    const objects = await renderMode(binary, {
      controller: {
        ...servedWebhook,
        networkPolicy: {
          apiServerCIDRs: ['10.0.0.10/32', 'fd00::10/128'],
          webhookFrom: [tunnel],
          metricsFrom: [monitoring],
        },
      },
    });
    expect(ingressOf(objects)).toEqual([
      {
        ports: [{ port: 'webhook', protocol: 'TCP' }],
        from: [
          { ipBlock: { cidr: '10.0.0.10/32' } },
          { ipBlock: { cidr: 'fd00::10/128' } },
          tunnel,
        ],
      },
      { ports: [{ port: 'metrics', protocol: 'TCP' }], from: [monitoring] },
    ]);
  });

  it('opens the webhook to everything outside the Pod network and to kube-system, per address family', async () => {
    const objects = await renderMode(binary, {
      controller: {
        ...servedWebhook,
        networkPolicy: { podCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56', '10.245.0.0/16'] },
      },
    });
    expect(ingressOf(objects)).toEqual([
      {
        ports: [{ port: 'webhook', protocol: 'TCP' }],
        from: [
          { ipBlock: { cidr: '0.0.0.0/0', except: ['10.244.0.0/16', '10.245.0.0/16'] } },
          { ipBlock: { cidr: '::/0', except: ['fd00:10:244::/56'] } },
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } },
        ],
      },
    ]);
  });

  it('lets health through to the peers given', async () => {
    const prober = { podSelector: { matchLabels: { app: 'prober' } } };
    const objects = await renderMode(binary, {
      controller: { webhook: { enabled: false }, networkPolicy: { healthFrom: [prober] } },
    });
    expect(ingressOf(objects)).toEqual([
      { ports: [{ port: 'health', protocol: 'TCP' }], from: [prober] },
    ]);
  });

  it('renders no controller NetworkPolicy when it is turned off', async () => {
    const objects = await renderMode(binary, {
      controller: { ...servedWebhook, networkPolicy: { enabled: false } },
    });
    expect(objects.filter((o) => o.kind === 'NetworkPolicy').map((o) => o.metadata.name)).toEqual([
      'haptic-haproxy',
      'haptic-jobs',
    ]);
  });

  it.each(chartModeNames)(
    'opens the agent port of the HAProxy pods to the controller pods only (%s)',
    async (mode) => {
      const objects = await renderMode(binary, chartModes[mode]);
      const policy = findObject(objects, 'NetworkPolicy', 'haptic-haproxy');
      expect(policy.metadata.namespace).toBe('haptic');
      expect(policy.body.spec).toEqual({
        podSelector: { matchLabels: haproxyLabels },
        policyTypes: ['Ingress', 'Egress'],
        egress: [{}],
        ingress: [
          {
            ports: [
              { port: 'http', protocol: 'TCP' },
              { port: 'https', protocol: 'TCP' },
            ],
          },
          {
            ports: [{ port: 5555, protocol: 'TCP' }],
            from: [{ podSelector: { matchLabels: controllerLabels } }],
          },
        ],
      });
      // The ports are the ones the pods have, and the selectors select the pods.
      const haproxy = podSpec(objects, 'haptic-haproxy');
      const ports = [...(haproxy.initContainers ?? []), ...haproxy.containers].flatMap((c) =>
        (c.ports ?? []).map((port) => [c.name, port.name, port.containerPort]),
      );
      expect(ports).toEqual([
        ['agent', 'agent', 5555],
        ['haproxy', 'http', 8080],
        ['haproxy', 'https', 8443],
        // The probes' ports: open to the pod's node (the kubelet) only.
        ['haproxy', 'liveness', 8081],
        ['haproxy', 'ready', 8082],
        // HAProxy's exporter: closed unless haproxy.networkPolicy.metricsFrom opens it.
        ['haproxy', 'metrics', 8404],
      ]);
      expect(podLabels(objects, 'haptic-haproxy')).toMatchObject(haproxyLabels);
      expect(podLabels(objects, 'haptic-controller')).toMatchObject(controllerLabels);
    },
  );

  it('follows the agent port and adds the extra rules given to the HAProxy policy', async () => {
    const stats = {
      ports: [{ port: 8404, protocol: 'TCP' }],
      from: [
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
      ],
    };
    const objects = await renderMode(binary, {
      haproxy: { agent: { port: 6555 }, networkPolicy: { extraIngress: [stats] } },
    });
    const { ingress } = findObject(objects, 'NetworkPolicy', 'haptic-haproxy').body.spec as {
      ingress: { ports: unknown[] }[];
    };
    expect(ingress.slice(1).map((rule) => rule.ports)).toEqual([
      [{ port: 6555, protocol: 'TCP' }],
      stats.ports,
    ]);
    expect(ingress[2]).toEqual(stats);
  });

  it('requires and verifies a client certificate with clientAuth.caSecretName', async () => {
    const objects = await renderMode(binary, {
      controller: {
        ...servedWebhook,
        webhook: {
          ...servedWebhook.webhook,
          clientAuth: { caSecretName: 'apiserver-webhook-client-ca' },
        },
      },
    });
    const spec = podSpec(objects, 'haptic-controller');
    const controller = spec.containers.find((container) => container.name === 'controller');
    expect(controller?.args).toContain('--webhook-client-ca-dir=/etc/haptic/webhook-client-ca');
    expect(controller?.volumeMounts).toContainEqual({
      name: 'webhook-client-ca',
      mountPath: '/etc/haptic/webhook-client-ca',
      readOnly: true,
    });
    expect(spec.volumes).toContainEqual({
      name: 'webhook-client-ca',
      secret: {
        secretName: 'apiserver-webhook-client-ca',
        defaultMode: 0o440,
        items: [{ key: 'ca.crt', path: 'ca.crt' }],
      },
    });
    const plain = podSpec(
      await renderMode(binary, chartModes['gitops cert-manager']),
      'haptic-controller',
    );
    expect(JSON.stringify(plain)).not.toContain('webhook-client-ca');
  });

  it.each([
    [
      'an address that is not a CIDR',
      { controller: { networkPolicy: { apiServerCIDRs: ['10.0.0.10'] } } },
      "at '/controller/networkPolicy/apiServerCIDRs/0'",
    ],
    [
      'a Pod network that is not a CIDR',
      { controller: { networkPolicy: { podCIDRs: ['10.244.0.0/33'] } } },
      "at '/controller/networkPolicy/podCIDRs/0'",
    ],
    [
      'a peer that is not a NetworkPolicyPeer',
      { controller: { networkPolicy: { metricsFrom: [{ pods: 'all' }] } } },
      "at '/controller/networkPolicy/metricsFrom/0'",
    ],
    [
      'a webhook peer that is not a NetworkPolicyPeer',
      { controller: { networkPolicy: { webhookFrom: [{}] } } },
      "at '/controller/networkPolicy/webhookFrom/0'",
    ],
    [
      'an HAProxy rule with a port out of range',
      { haproxy: { networkPolicy: { extraIngress: [{ ports: [{ port: 70000 }] }] } } },
      "at '/haproxy/networkPolicy/extraIngress/0/ports/0/port'",
    ],
    [
      'an HAProxy rule with an unknown field',
      { haproxy: { networkPolicy: { extraIngress: [{ to: [] }] } } },
      "at '/haproxy/networkPolicy/extraIngress/0'",
    ],
  ])('refuses a NetworkPolicy with %s', async (_, values, where) => {
    const file = writeValuesFile(values);
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
