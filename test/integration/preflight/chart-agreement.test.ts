/**
 * The validator mirrors the chart in two places: the value rules (same sentences as
 * chart/templates/_values-errors.tpl) and the release plan (same names as the templates).
 * These tests render the real chart with the real helm and compare.
 */
import { describe, expect, it } from 'vitest';
import { toolPath } from '../../../dev/lib/tools.ts';
import { HapticError } from '../../../src/errors.ts';
import { type RenderedObject, renderChart } from '../../../src/render/index.ts';
import { coalesceValues, planRelease, readReleaseValues } from '../../../src/validation/index.ts';
import { everyFinding } from '../../../src/validation/finding.ts';
import { mountedSecret } from '../../../src/validation/render-rules.ts';
import { sharedSecretNames, valuesChecks } from '../../../src/validation/values-rules.ts';
import { b64, chartDefaults, makeCa, pem, valuesOf } from '../../unit/validation/material.ts';

const helmBin = toolPath('helm');
const defaults = chartDefaults();
const caBundle = b64(pem((await makeCa('webhook-ca')).certificate));

function validatorMessages(release: string, user: Record<string, unknown>): string[] {
  const values = readReleaseValues(coalesceValues(user, defaults));
  const subject = { values, plan: planRelease(release, 'haptic', values) };
  return [...everyFinding(subject, valuesChecks()), ...sharedSecretNames(subject)].map(
    (f) => f.message,
  );
}

async function chartMessages(release: string, user: Record<string, unknown>): Promise<string[]> {
  try {
    await renderChart({ helmBin, release, values: user });
    return [];
  } catch (error) {
    if (!(error instanceof HapticError)) throw error;
    const prefix = `invalid values for release "${release}":\n- `;
    expect(error.message.startsWith(prefix), error.message).toBe(true);
    return error.message.slice(prefix.length).split('\n- ');
  }
}

const ruleCases: readonly (readonly [string, Record<string, unknown>])[] = [
  ['legacy without credentials', { 'haproxy.agent.tls.enabled': false }],
  [
    'external without names, with cert-manager',
    { 'haproxy.agent.tls.managed': false, 'haproxy.agent.tls.certManager.enabled': true },
  ],
  [
    'created issuer with issuerRef.name',
    {
      'haproxy.agent.tls.certManager.enabled': true,
      'haproxy.agent.tls.certManager.issuerRef.name': 'org',
    },
  ],
  [
    'existing issuer without kind and group',
    {
      'haproxy.agent.tls.certManager.enabled': true,
      'haproxy.agent.tls.certManager.createIssuer': false,
      'haproxy.agent.tls.certManager.issuerRef.kind': '',
      'haproxy.agent.tls.certManager.issuerRef.group': '',
    },
  ],
  ['equal peer names', { 'haproxy.agent.tls.clientName': 'haptic-agent' }],
  [
    'caBundle with cert-manager',
    { 'controller.webhook.caBundle': caBundle, 'controller.webhook.certManager.enabled': true },
  ],
  ['caBundle without secretName', { 'controller.webhook.caBundle': caBundle }],
  [
    'caBundle that is no PEM',
    { 'controller.webhook.secretName': 'hook', 'controller.webhook.caBundle': b64('nope') },
  ],
  ['external webhook Secret without caBundle', { 'controller.webhook.secretName': 'hook' }],
  [
    'shared Secret names',
    {
      'haproxy.agent.tls.issuerSecretName': 'x',
      'haproxy.agent.tls.serverSecretName': 'x',
      'credentials.existingSecret': 'x',
    },
  ],
  [
    'webhook Secret named like the frontend',
    {
      'controller.webhook.certManager.enabled': true,
      'defaultSSLCertificate.secretName': 'haptic-webhook-tls',
    },
  ],
  ['valid defaults', {}],
];

describe('value rules agree with the chart', () => {
  it.each(ruleCases)('%s', async (_, flat) => {
    const user = valuesOf(flat);
    const chart = await chartMessages('haptic', user);
    expect(validatorMessages('haptic', user)).toEqual(chart);
  });
});

function find(objects: readonly RenderedObject[], kind: string, name: string): RenderedObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`the chart rendered no ${kind} ${name}`);
  return found;
}

function args(object: RenderedObject): string[] {
  const spec = JSON.stringify(object.body);
  return [...spec.matchAll(/"(--[a-z-]+=[^"]*)"/g)].map((m) => m[1] ?? '');
}

const planCases: readonly (readonly [string, string, Record<string, unknown>])[] = [
  ['the defaults', 'haptic', {}],
  ['another release name', 'edge', {}],
  [
    'overrides and custom names',
    'edge',
    {
      fullnameOverride: 'lb',
      'haproxy.agent.tls.issuerSecretName': 'my-ca',
      'credentials.existingSecret': 'creds',
    },
  ],
  [
    'external identities and webhook',
    'haptic',
    {
      'haproxy.agent.tls.managed': false,
      'haproxy.agent.tls.serverSecretName': 'agent-id',
      'haproxy.agent.tls.clientSecretName': 'controller-id',
      'controller.webhook.secretName': 'hook',
      'controller.webhook.caBundle': caBundle,
      'defaultSSLCertificate.secretName': 'frontend',
    },
  ],
  [
    'cert-manager everywhere',
    'haptic',
    {
      'haproxy.agent.tls.certManager.enabled': true,
      'controller.webhook.certManager.enabled': true,
    },
  ],
  [
    'legacy Basic authentication',
    'haptic',
    { 'haproxy.agent.tls.enabled': false, 'credentials.existingSecret': 'creds' },
  ],
];

describe('the release plan names what the chart renders', () => {
  it.each(planCases)('%s', async (_, release, flat) => {
    const user = valuesOf(flat);
    const plan = planRelease(release, 'haptic', readReleaseValues(coalesceValues(user, defaults)));
    const { objects } = await renderChart({ helmBin, release, values: user });
    const named = (role: string) => plan.secrets.find((s) => s.role === role)?.name;

    const controller = find(objects, 'Deployment', plan.controllerDeployment);
    const haproxy = find(objects, 'Deployment', plan.haproxyDeployment);
    expect(mountedSecret(haproxy, 'agent-tls')).toBe(named('server'));
    expect(mountedSecret(controller, 'agent-tls')).toBe(named('client'));
    expect(mountedSecret(controller, 'webhook-tls')).toBe(named('webhook'));
    expect(find(objects, 'Job', plan.preRolloutJob).hook?.events).toContain('pre-upgrade');
    find(objects, 'Secret', plan.valuesSecret);

    const role = find(objects, 'Role', plan.preRolloutJob).body as {
      rules: { resources: string[]; resourceNames?: string[] }[];
    };
    const readable =
      role.rules.find((rule) => rule.resources.includes('secrets'))?.resourceNames ?? [];
    expect([...readable].sort()).toEqual(
      plan.secrets
        .filter((s) => s.readable)
        .map((s) => s.name)
        .sort(),
    );

    const certificates = objects
      .filter((o) => o.kind === 'Certificate')
      .map((o) => (o.body as { spec: { secretName: string } }).spec.secretName)
      .sort();
    expect(certificates).toEqual(
      plan.secrets
        .filter((s) => s.provider === 'cert-manager')
        .map((s) => s.name)
        .sort(),
    );

    const renewal = objects.find((o) => o.kind === 'CronJob');
    if (plan.agentProvider === 'default') {
      expect(args(renewal ?? controller)).toEqual(
        expect.arrayContaining([
          `--issuer-secret=${named('issuer') ?? ''}`,
          `--server-secret=${named('server') ?? ''}`,
          `--client-secret=${named('client') ?? ''}`,
          `--server-name=${plan.peerNames.server}`,
          `--client-name=${plan.peerNames.client}`,
        ]),
      );
    } else {
      expect(renewal).toBeUndefined();
    }
  });
});
