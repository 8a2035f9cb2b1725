import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { readChartMetadata } from '../../../src/render/index.ts';
import { chartModes, findObject, helmBinaries, renderMode } from './chart-fixtures.ts';

const renewArgs = [
  'certificates',
  'renew',
  '--namespace=haptic',
  '--issuer-secret=haptic-agent-ca',
  '--server-secret=haptic-agent-server-tls',
  '--client-secret=haptic-agent-client-tls',
  '--server-name=haptic-agent',
  '--client-name=haptic-controller',
  '--validity-days=365',
];

const renewRules = [
  { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
  {
    apiGroups: [''],
    resources: ['secrets'],
    resourceNames: ['haptic-agent-ca', 'haptic-agent-server-tls', 'haptic-agent-client-tls'],
    verbs: ['get', 'update', 'patch'],
  },
  // Read-only: what the replicas report, for the clean-up gated on convergence.
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
  {
    apiGroups: ['haproxy-haptic.org'],
    resources: ['haproxytemplateconfigs'],
    resourceNames: ['haptic'],
    verbs: ['get'],
  },
];

interface PodTemplate {
  readonly spec: {
    readonly serviceAccountName: string;
    readonly containers: readonly {
      readonly command: readonly string[];
      readonly args: readonly string[];
      readonly env?: readonly { readonly name: string; readonly value?: string }[];
    }[];
  };
}

function podTemplate(body: Readonly<Record<string, unknown>>): PodTemplate {
  const spec = body.spec as {
    template?: PodTemplate;
    jobTemplate?: { spec: { template: PodTemplate } };
  };
  const template = spec.template ?? spec.jobTemplate?.spec.template;
  if (template === undefined) throw new Error('no pod template');
  return template;
}

describe.each(helmBinaries)('hooks rendered by %s', (binary) => {
  it('run CRDs, then pre-rollout validation, then the certificate bootstrap, then the webhook certificate', async () => {
    const objects = await renderMode(binary, chartModes.default);
    const hooks = objects
      .filter((o) => o.hook !== undefined)
      .map((o) => [o.hook?.weight, `${o.kind}/${o.metadata.name}`] as const)
      .sort(([a], [b]) => (a ?? 0) - (b ?? 0));
    expect(hooks).toEqual([
      [-30, 'ServiceAccount/haptic-crds'],
      [-30, 'ClusterRole/haptic-haptic-crds'],
      [-30, 'ClusterRoleBinding/haptic-haptic-crds'],
      [-25, 'Job/haptic-crds'],
      [-20, 'ServiceAccount/haptic-haptic-pre-rollout'],
      [-20, 'Secret/haptic-haptic-pre-rollout-values'],
      [-20, 'Role/haptic-haptic-pre-rollout'],
      [-20, 'RoleBinding/haptic-haptic-pre-rollout'],
      [-15, 'Job/haptic-haptic-pre-rollout'],
      [-10, 'ServiceAccount/haptic-agent-bootstrap'],
      [-10, 'Role/haptic-agent-bootstrap'],
      [-10, 'RoleBinding/haptic-agent-bootstrap'],
      [-5, 'Job/haptic-agent-bootstrap'],
      [0, 'ServiceAccount/haptic-webhook-certificate'],
      [0, 'ClusterRole/haptic-haptic-webhook-certificate'],
      [0, 'ClusterRoleBinding/haptic-haptic-webhook-certificate'],
      [0, 'Role/haptic-webhook-certificate'],
      [0, 'RoleBinding/haptic-webhook-certificate'],
      [5, 'Job/haptic-webhook-certificate'],
    ]);
  });

  it('are all pre-install,pre-upgrade, replaced before creation and kept when they fail', async () => {
    const objects = await renderMode(binary, chartModes.default);
    const hooks = objects.flatMap((o) => (o.hook === undefined ? [] : [[o, o.hook] as const]));
    for (const [object, hook] of hooks) {
      // The webhook certificate runs after the release's objects too: on a first install
      // its registration, whose caBundle it sets, exists only then.
      expect(hook.events).toEqual(
        object.metadata.name.endsWith('webhook-certificate')
          ? ['pre-install', 'pre-upgrade', 'post-install', 'post-upgrade']
          : ['pre-install', 'pre-upgrade'],
      );
      expect(hook.deletePolicies).toEqual(['before-hook-creation', 'hook-succeeded']);
    }
  });

  it('give the webhook certificate Job its Secret, Service and registration, and nothing more', async () => {
    const objects = await renderMode(binary, chartModes.default);
    const job = podTemplate(findObject(objects, 'Job', 'haptic-webhook-certificate').body);
    expect(job.spec.serviceAccountName).toBe('haptic-webhook-certificate');
    expect(job.spec.containers[0]?.args).toEqual([
      'certificates',
      'webhook',
      '--namespace=haptic',
      '--secret=haptic-webhook-default-tls',
      '--service=haptic-webhook',
      '--webhook-configuration=haptic-haptic-webhook',
    ]);
    expect(findObject(objects, 'Role', 'haptic-webhook-certificate').body.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['haptic-webhook-default-tls'],
        verbs: ['get', 'update'],
      },
    ]);
    expect(
      findObject(objects, 'ClusterRole', 'haptic-haptic-webhook-certificate').body.rules,
    ).toEqual([
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['validatingwebhookconfigurations'],
        resourceNames: ['haptic-haptic-webhook'],
        verbs: ['get', 'update'],
      },
    ]);
    for (const values of [
      { controller: { webhook: { enabled: false } } },
      { controller: { webhook: { certManager: { enabled: true } } } },
    ]) {
      const other = await renderMode(binary, values);
      expect(other.filter((o) => o.metadata.name.endsWith('webhook-certificate'))).toEqual([]);
    }
  });

  it('give the pre-rollout Job the values, the version guard and read-only access', async () => {
    const values = { controller: { replicas: 3 } };
    const objects = await renderMode(binary, values);
    const job = podTemplate(findObject(objects, 'Job', 'haptic-haptic-pre-rollout').body);
    const [container] = job.spec.containers;
    expect(container?.command).toEqual(['/usr/local/bin/haptic']);
    expect(container?.args).toEqual([
      'preflight',
      '--values=/etc/haptic/pre-rollout/values.yaml',
      '--namespace=haptic',
      '--release=haptic',
    ]);
    expect(container?.env).toEqual([
      { name: 'HAPTIC_EXPECT_CHART_VERSION', value: readChartMetadata().version },
    ]);
    const secret = findObject(objects, 'Secret', 'haptic-haptic-pre-rollout-values').body as {
      stringData: { 'values.yaml': string };
    };
    expect(parse(secret.stringData['values.yaml'])).toMatchObject(values);
    const role = findObject(objects, 'Role', 'haptic-haptic-pre-rollout').body as {
      rules: readonly { verbs: readonly string[]; resourceNames?: readonly string[] }[];
    };
    expect(role.rules.flatMap((r) => r.verbs)).toEqual(['get', 'get']);
    expect(role.rules.every((r) => (r.resourceNames ?? []).length > 0)).toBe(true);
  });

  it('bootstrap and renew with the same arguments and the same narrow RBAC', async () => {
    const objects = await renderMode(binary, chartModes.default);
    const bootstrap = podTemplate(findObject(objects, 'Job', 'haptic-agent-bootstrap').body);
    const cronJob = findObject(objects, 'CronJob', 'haptic-agent-renewal');
    const renewal = podTemplate(cronJob.body);
    for (const template of [bootstrap, renewal]) {
      expect(template.spec.containers[0]?.args).toEqual(renewArgs);
    }
    expect(bootstrap.spec.serviceAccountName).toBe('haptic-agent-bootstrap');
    expect(renewal.spec.serviceAccountName).toBe('haptic-agent-renewal');
    for (const name of ['haptic-agent-bootstrap', 'haptic-agent-renewal']) {
      expect((findObject(objects, 'Role', name).body as { rules: unknown }).rules).toEqual(
        renewRules,
      );
    }
    expect(cronJob.body.spec).toMatchObject({
      schedule: '0 * * * *',
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 600,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: { spec: { activeDeadlineSeconds: 600, backoffLimit: 2 } },
    });
    expect(cronJob.hook).toBeUndefined();
  });

  it('skip the certificate bootstrap unless the default provider manages certificates', async () => {
    for (const mode of ['cert-manager', 'external', 'legacy'] as const) {
      const names = (await renderMode(binary, chartModes[mode])).map((o) => o.metadata.name);
      expect(names).not.toContain('haptic-agent-bootstrap');
      expect(names).toContain('haptic-haptic-pre-rollout');
      expect(names).toContain('haptic-crds');
    }
  });
});
