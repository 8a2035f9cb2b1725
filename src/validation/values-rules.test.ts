import { describe, expect, it } from 'vitest';
import { b64, chartDefaults, makeCa, pem, valuesOf } from '../../test/unit/validation/material.ts';
import { everyFinding } from './finding.ts';
import { planRelease } from './release-plan.ts';
import { readReleaseValues } from './release-values.ts';
import { coalesceValues } from './values-merge.ts';
import { type ValuesSubject, sharedSecretNames, valuesChecks } from './values-rules.ts';

const defaults = chartDefaults();

function subject(flat: Record<string, unknown>): ValuesSubject {
  const values = readReleaseValues(coalesceValues(valuesOf(flat), defaults));
  return { values, plan: planRelease('haptic', 'haptic', values) };
}

function findings(flat: Record<string, unknown>): string[] {
  const s = subject(flat);
  return [...everyFinding(s, valuesChecks()), ...sharedSecretNames(s)].map(
    (f) => `${f.code} ${f.path}: ${f.message}`,
  );
}

const caBundle = b64(pem((await makeCa('webhook-ca')).certificate));

const cases: readonly {
  readonly name: string;
  readonly passing: Record<string, unknown>;
  readonly failing: Record<string, unknown>;
  readonly finding: string;
}[] = [
  {
    name: 'legacy Basic authentication requires credentials.existingSecret',
    passing: { 'haproxy.agent.tls.enabled': false, 'credentials.existingSecret': 'creds' },
    failing: { 'haproxy.agent.tls.enabled': false },
    finding:
      'LegacyCredentialsMissing credentials.existingSecret: haproxy.agent.tls.enabled is false (legacy Basic authentication), which requires credentials.existingSecret: create a Secret with the keys dataplane_username and dataplane_password and set its name there; the chart never generates passwords.',
  },
  {
    name: 'external identities need serverSecretName',
    passing: {
      'haproxy.agent.tls.managed': false,
      'haproxy.agent.tls.serverSecretName': 'agent-id',
      'haproxy.agent.tls.clientSecretName': 'controller-id',
    },
    failing: {
      'haproxy.agent.tls.managed': false,
      'haproxy.agent.tls.clientSecretName': 'controller-id',
    },
    finding:
      'ExternalSecretNameMissing haproxy.agent.tls.serverSecretName: haproxy.agent.tls.serverSecretName is required when haproxy.agent.tls.managed is false: name the Secret that holds the agent identity (tls.crt, tls.key, ca.crt).',
  },
  {
    name: 'external identities need clientSecretName',
    passing: {
      'haproxy.agent.tls.managed': false,
      'haproxy.agent.tls.serverSecretName': 'agent-id',
      'haproxy.agent.tls.clientSecretName': 'controller-id',
    },
    failing: {
      'haproxy.agent.tls.managed': false,
      'haproxy.agent.tls.serverSecretName': 'agent-id',
    },
    finding:
      'ExternalSecretNameMissing haproxy.agent.tls.clientSecretName: haproxy.agent.tls.clientSecretName is required when haproxy.agent.tls.managed is false: name the Secret that holds the controller identity (tls.crt, tls.key, ca.crt).',
  },
  {
    name: 'external identities exclude cert-manager',
    passing: { 'haproxy.agent.tls.certManager.enabled': true },
    failing: {
      'haproxy.agent.tls.managed': false,
      'haproxy.agent.tls.serverSecretName': 'agent-id',
      'haproxy.agent.tls.clientSecretName': 'controller-id',
      'haproxy.agent.tls.certManager.enabled': true,
    },
    finding:
      'AgentProviderConflict haproxy.agent.tls.certManager.enabled: haproxy.agent.tls.managed is false (external identities) but haproxy.agent.tls.certManager.enabled is true: choose one provider; set certManager.enabled to false to supply your own Secrets, or managed to true to let cert-manager issue them.',
  },
  {
    name: 'a chart-created issuer takes no issuerRef.name',
    passing: { 'haproxy.agent.tls.certManager.enabled': true },
    failing: {
      'haproxy.agent.tls.certManager.enabled': true,
      'haproxy.agent.tls.certManager.issuerRef.name': 'organisation',
    },
    finding:
      'IssuerRefConflict haproxy.agent.tls.certManager.issuerRef.name: haproxy.agent.tls.certManager.issuerRef.name is "organisation" but haproxy.agent.tls.certManager.createIssuer is true: set createIssuer to false to use that issuer, or remove issuerRef.name to let the chart create one.',
  },
  {
    name: 'an existing issuer needs issuerRef.name',
    passing: {
      'haproxy.agent.tls.certManager.enabled': true,
      'haproxy.agent.tls.certManager.createIssuer': false,
      'haproxy.agent.tls.certManager.issuerRef.name': 'organisation',
    },
    failing: {
      'haproxy.agent.tls.certManager.enabled': true,
      'haproxy.agent.tls.certManager.createIssuer': false,
    },
    finding:
      'IssuerRefIncomplete haproxy.agent.tls.certManager.issuerRef.name: haproxy.agent.tls.certManager.issuerRef.name is required when haproxy.agent.tls.certManager.createIssuer is false: give the name of your existing issuer.',
  },
  {
    name: 'an existing issuer needs issuerRef.kind',
    passing: {
      'haproxy.agent.tls.certManager.enabled': true,
      'haproxy.agent.tls.certManager.createIssuer': false,
      'haproxy.agent.tls.certManager.issuerRef.name': 'organisation',
    },
    failing: {
      'haproxy.agent.tls.certManager.enabled': true,
      'haproxy.agent.tls.certManager.createIssuer': false,
      'haproxy.agent.tls.certManager.issuerRef.name': 'organisation',
      'haproxy.agent.tls.certManager.issuerRef.kind': '',
    },
    finding:
      'IssuerRefIncomplete haproxy.agent.tls.certManager.issuerRef.kind: haproxy.agent.tls.certManager.issuerRef.kind is required when haproxy.agent.tls.certManager.createIssuer is false: give the kind of your existing issuer.',
  },
  {
    name: 'an existing issuer needs issuerRef.group',
    passing: {
      'haproxy.agent.tls.certManager.enabled': true,
      'haproxy.agent.tls.certManager.createIssuer': false,
      'haproxy.agent.tls.certManager.issuerRef.name': 'organisation',
    },
    failing: {
      'haproxy.agent.tls.certManager.enabled': true,
      'haproxy.agent.tls.certManager.createIssuer': false,
      'haproxy.agent.tls.certManager.issuerRef.name': 'organisation',
      'haproxy.agent.tls.certManager.issuerRef.group': '',
    },
    finding:
      'IssuerRefIncomplete haproxy.agent.tls.certManager.issuerRef.group: haproxy.agent.tls.certManager.issuerRef.group is required when haproxy.agent.tls.certManager.createIssuer is false: give the group of your existing issuer.',
  },
  {
    name: 'server and client names differ',
    passing: { 'haproxy.agent.tls.clientName': 'controller.example.internal' },
    failing: { 'haproxy.agent.tls.clientName': 'haptic-agent' },
    finding:
      'PeerNamesEqual haproxy.agent.tls.clientName: haproxy.agent.tls.serverName and haproxy.agent.tls.clientName must differ (both are "haptic-agent"): an agent certificate must never authorise a controller operation.',
  },
  {
    name: 'certValidityDays is a whole number from 1 to 3650',
    passing: { 'haproxy.agent.tls.certValidityDays': 3650 },
    failing: { 'haproxy.agent.tls.certValidityDays': 3651 },
    finding:
      'CertValidityOutOfRange haproxy.agent.tls.certValidityDays: haproxy.agent.tls.certValidityDays must be a whole number of days from 1 to 3650, not 3651.',
  },
  {
    name: 'caBundle is not given with cert-manager',
    passing: { 'controller.webhook.certManager.enabled': true },
    failing: {
      'controller.webhook.certManager.enabled': true,
      'controller.webhook.caBundle': caBundle,
    },
    finding:
      'WebhookCaBundleConflict controller.webhook.caBundle: controller.webhook.caBundle is set but controller.webhook.certManager.enabled is true: cert-manager injects the CA bundle; remove caBundle.',
  },
  {
    name: 'caBundle comes with a webhook secretName',
    passing: { 'controller.webhook.secretName': 'hook', 'controller.webhook.caBundle': caBundle },
    failing: { 'controller.webhook.caBundle': caBundle },
    finding:
      'WebhookSecretNameMissing controller.webhook.secretName: controller.webhook.caBundle is set without controller.webhook.secretName: name the Secret that holds the webhook certificate (tls.crt, tls.key).',
  },
  {
    name: 'caBundle is a base64 PEM certificate bundle',
    passing: { 'controller.webhook.secretName': 'hook', 'controller.webhook.caBundle': caBundle },
    failing: {
      'controller.webhook.secretName': 'hook',
      'controller.webhook.caBundle': Buffer.from('not a certificate').toString('base64'),
    },
    finding:
      'WebhookCaBundleInvalid controller.webhook.caBundle: controller.webhook.caBundle must be a base64-encoded PEM certificate bundle, for example the output of `base64 -w0 webhook-ca.crt`.',
  },
  {
    name: 'an external webhook Secret needs caBundle',
    passing: { 'controller.webhook.secretName': 'hook', 'controller.webhook.caBundle': caBundle },
    failing: { 'controller.webhook.secretName': 'hook' },
    finding:
      'WebhookCaBundleMissing controller.webhook.caBundle: controller.webhook.caBundle is required with an external controller.webhook.secretName: set it to the base64-encoded PEM CA that signed the webhook certificate, or enable controller.webhook.certManager.',
  },
  {
    name: 'issuer and identity Secrets have different names',
    passing: { 'haproxy.agent.tls.issuerSecretName': 'ca' },
    failing: {
      'haproxy.agent.tls.issuerSecretName': 'shared',
      'haproxy.agent.tls.serverSecretName': 'shared',
    },
    finding:
      'SecretNameShared haproxy.agent.tls.serverSecretName: haproxy.agent.tls.issuerSecretName and haproxy.agent.tls.serverSecretName both name Secret "shared": each Secret has exactly one owner; give them different names.',
  },
  {
    name: 'server and client identity Secrets have different names',
    passing: { 'haproxy.agent.tls.serverSecretName': 'agent-id' },
    failing: {
      'haproxy.agent.tls.serverSecretName': 'same',
      'haproxy.agent.tls.clientSecretName': 'same',
    },
    finding:
      'SecretNameShared haproxy.agent.tls.clientSecretName: haproxy.agent.tls.serverSecretName and haproxy.agent.tls.clientSecretName both name Secret "same": each Secret has exactly one owner; give them different names.',
  },
  {
    name: 'the credentials Secret is not an identity Secret',
    passing: { 'credentials.existingSecret': 'creds' },
    failing: { 'credentials.existingSecret': 'haptic-agent-client-tls' },
    finding:
      'SecretNameShared credentials.existingSecret: haproxy.agent.tls.clientSecretName and credentials.existingSecret both name Secret "haptic-agent-client-tls": each Secret has exactly one owner; give them different names.',
  },
];

describe('values rules', () => {
  it('accept the chart defaults', () => {
    expect(findings({})).toEqual([]);
  });

  describe.each(cases)('$name', ({ passing, failing, finding }) => {
    it('accepts the passing values', () => {
      expect(findings(passing)).toEqual([]);
    });
    it('rejects the failing values with the chart sentence', () => {
      expect(findings(failing)).toEqual([finding]);
    });
  });

  it('reports every violated rule at once, in the chart order', () => {
    expect(
      findings({ 'haproxy.agent.tls.managed': false, 'controller.webhook.secretName': 'hook' }).map(
        (f) => f.split(' ')[0],
      ),
    ).toEqual(['ExternalSecretNameMissing', 'ExternalSecretNameMissing', 'WebhookCaBundleMissing']);
  });
});
