import { describe, expect, it } from 'vitest';
import {
  b64,
  certManagerMarker,
  chartDefaults,
  defaultMarker,
  identityData,
  keyPairData,
  makeCa,
  makeLeaf,
  now,
  pem,
  secret,
  valuesOf,
} from '../../test/unit/validation/material.ts';
import { issueLeaf } from '../pki/index.ts';
import { type LiveState, checkLiveState } from './live-rules.ts';
import { planRelease } from './release-plan.ts';
import { readReleaseValues } from './release-values.ts';
import type { SecretObject } from './secret-data.ts';
import { SecretDecoder } from '../secrets/secret-decoder.ts';
import { coalesceValues } from './values-merge.ts';

const defaults = chartDefaults();
const ca = await makeCa();
const agent = await makeLeaf('agent', 'agent.example.internal', ca);
const controller = await makeLeaf('controller', 'controller.example.internal', ca);
const webhookCa = await makeCa('webhook-ca');
const webhookLeaf = await issueLeaf({
  role: 'agent',
  dnsName: 'haptic-webhook.haptic.svc',
  issuer: { certificate: webhookCa.certificate, privateKey: webhookCa.keys.privateKey },
  validityDays: 30,
  now,
});

const external = {
  'haproxy.agent.tls.managed': false,
  'haproxy.agent.tls.serverSecretName': 'agent-id',
  'haproxy.agent.tls.clientSecretName': 'controller-id',
  'haproxy.agent.tls.serverName': 'agent.example.internal',
  'haproxy.agent.tls.clientName': 'controller.example.internal',
};

function findings(
  flat: Record<string, unknown>,
  secrets: readonly SecretObject[],
  mounted: LiveState['mounted'] = {},
): string[] {
  const values = readReleaseValues(coalesceValues(valuesOf(flat), defaults));
  const plan = planRelease('haptic', 'haptic', values);
  const live = { secrets: new Map(secrets.map((s) => [s.name, s])), mounted };
  return checkLiveState({ plan, values, live, now, decoder: new SecretDecoder() }).map(
    (f) => `${f.severity} ${f.code} ${f.path}: ${f.message}`,
  );
}

const agentSecret = secret('agent-id', identityData({ leaf: agent, trust: [ca.certificate] }));
const controllerSecret = secret(
  'controller-id',
  identityData({ leaf: controller, trust: [ca.certificate] }),
);

describe('live rules', () => {
  it('accept a first install of the default provider', () => {
    expect(findings({}, [])).toEqual([]);
  });

  it('accept a default-provider upgrade over its own Secrets', () => {
    expect(findings({}, [secret('haptic-agent-ca', {}, { labels: defaultMarker })])).toEqual([]);
  });

  it('reject a switch to cert-manager onto the default provider’s Secrets', () => {
    const found = findings({ 'haproxy.agent.tls.certManager.enabled': true }, [
      secret('haptic-agent-ca', {}, { labels: defaultMarker }),
      secret('haptic-agent-server-tls', {}, { labels: defaultMarker }),
    ]);
    expect(found.map((f) => f.split(':')[0])).toEqual([
      'error ProviderTakeover haproxy.agent.tls.issuerSecretName',
      'error ProviderTakeover haproxy.agent.tls.serverSecretName',
    ]);
    expect(found[0]).toContain('use new Secret names when changing providers');
  });

  it('reject external identities onto cert-manager Secrets', () => {
    const owned = { ...agentSecret, annotations: certManagerMarker };
    expect(findings(external, [owned, controllerSecret]).map((f) => f.split(' ')[1])).toEqual([
      'ProviderTakeover',
    ]);
  });

  it('accept valid external identities', () => {
    expect(findings(external, [agentSecret, controllerSecret])).toEqual([]);
  });

  it('reject a CA in ca.crt that issued neither external identity (a smuggled trust anchor)', async () => {
    const stray = await makeCa('stray-ca');
    const smuggled = secret(
      'agent-id',
      identityData({ leaf: agent, trust: [ca.certificate, stray.certificate] }),
    );
    expect(findings(external, [smuggled, controllerSecret])).toEqual([
      'error UnrelatedCaReplacement secret/agent-id/ca.crt: ca.crt of Secret haptic/agent-id trusts the CA CN=stray-ca, which issued neither the agent nor the controller certificate of this release: remove it from ca.crt; to move to that CA, ' +
        'set ca.crt to the new CA, previous-ca.crt to the current ca.crt and previous-ca-until at most 24 hours ahead in one write, then replace tls.crt and tls.key, then remove previous-ca.crt and previous-ca-until.',
    ]);
  });

  it('accept identities from two CAs when each ca.crt holds both', async () => {
    const other = await makeCa('controller-ca');
    const otherController = await makeLeaf('controller', 'controller.example.internal', other);
    const both = [ca.certificate, other.certificate];
    expect(
      findings(external, [
        secret('agent-id', identityData({ leaf: agent, trust: both })),
        secret('controller-id', identityData({ leaf: otherController, trust: both })),
      ]),
    ).toEqual([]);
  });

  it('reject a missing external identity, saying how to create it', () => {
    expect(findings(external, [agentSecret])).toEqual([
      'error SecretMissing haproxy.agent.tls.clientSecretName: haproxy.agent.tls.clientSecretName names Secret haptic/controller-id, which does not exist: create it with the controller identity (tls.crt, tls.key, ca.crt) before installing or upgrading, or correct the name.',
    ]);
  });

  it('reject external identities swapped between the Secrets', () => {
    const swapped = [
      { ...agentSecret, data: controllerSecret.data },
      { ...controllerSecret, data: agentSecret.data },
    ];
    expect(findings(external, swapped).map((f) => f.split(' ')[1])).toEqual([
      'IdentityWrongPurpose',
      'IdentityWrongPurpose',
    ]);
  });

  it('check the credential Secret’s keys', () => {
    const flat = { 'credentials.existingSecret': 'creds' };
    expect(findings(flat, [])[0]).toBe(
      'error CredentialsSecretMissing credentials.existingSecret: credentials.existingSecret names Secret haptic/creds, which does not exist: create it with the keys dataplane_username and dataplane_password, or correct the name.',
    );
    expect(findings(flat, [secret('creds', { dataplane_username: b64('admin') })])).toEqual([
      'error CredentialsSecretIncomplete secret/creds/dataplane_password: Secret haptic/creds (credentials.existingSecret) has no dataplane_password: it must provide dataplane_username and dataplane_password.',
    ]);
    expect(
      findings(flat, [
        secret('creds', { dataplane_username: b64('admin'), dataplane_password: b64('pw') }),
      ]),
    ).toEqual([]);
  });

  it('check the external webhook certificate against caBundle and the Service name', async () => {
    const flat = {
      'controller.webhook.secretName': 'hook',
      'controller.webhook.caBundle': b64(pem(webhookCa.certificate)),
    };
    const good = secret('hook', keyPairData(webhookLeaf.certificate, webhookLeaf.keys));
    expect(findings(flat, [good])).toEqual([]);
    const otherCa = await issueLeaf({
      role: 'agent',
      dnsName: 'haptic-webhook.haptic.svc',
      issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
      validityDays: 30,
      now,
    });
    expect(
      findings(flat, [secret('hook', keyPairData(otherCa.certificate, otherCa.keys))]),
    ).toEqual([
      `error WebhookCertificateInvalid secret/hook/tls.crt: The webhook certificate in Secret haptic/hook (issuer ${ca.certificate.subject}) is not signed by a CA in controller.webhook.caBundle: reissue it from the CA in caBundle, or set caBundle to the base64 PEM of the CA that issued it.`,
    ]);
    const unnamed = secret('hook', keyPairData(agent.certificate, agent.keys));
    expect(findings(flat, [unnamed])).toEqual([
      'error WebhookCertificateInvalid secret/hook/tls.crt: The webhook certificate in Secret haptic/hook cannot serve haptic-webhook.haptic.svc under controller.webhook.caBundle: The certificate CN=agent.example.internal has DNS names agent.example.internal, not haptic-webhook.haptic.svc; reissue it with the DNS SAN haptic-webhook.haptic.svc. Update the Secret, or caBundle, so they match.',
    ]);
  });

  it("name caBundle, not the certificate, when the Secret's own ca.crt verifies it", () => {
    const flat = {
      'controller.webhook.secretName': 'hook',
      'controller.webhook.caBundle': b64(pem(ca.certificate)),
    };
    const hook = secret('hook', {
      ...keyPairData(webhookLeaf.certificate, webhookLeaf.keys),
      'ca.crt': b64(pem(webhookCa.certificate)),
    });
    expect(findings(flat, [hook])).toEqual([
      `error WebhookCaBundleMismatch controller.webhook.caBundle: controller.webhook.caBundle does not hold the CA that issued the webhook certificate in Secret haptic/hook (issuer ${webhookCa.certificate.subject}), so the API server would refuse the webhook's TLS. Set controller.webhook.caBundle to that Secret's ca.crt as base64: kubectl get secret hook -n haptic -o jsonpath='{.data.ca\\.crt}'.`,
    ]);
  });

  it('report a webhook or frontend key that does not belong to its certificate as KeyMismatch on tls.key', () => {
    const mismatched = secret('pair', keyPairData(webhookLeaf.certificate, agent.keys));
    expect(
      findings(
        {
          'controller.webhook.secretName': 'pair',
          'controller.webhook.caBundle': b64(pem(webhookCa.certificate)),
        },
        [mismatched],
      ),
    ).toEqual([
      'error KeyMismatch secret/pair/tls.key: tls.key of Secret haptic/pair does not belong to the webhook certificate in tls.crt: update tls.crt and tls.key together, from the same issuance.',
    ]);
    expect(findings({ 'defaultSSLCertificate.secretName': 'pair' }, [mismatched])).toEqual([
      'error KeyMismatch secret/pair/tls.key: tls.key of Secret haptic/pair does not belong to the default frontend certificate in tls.crt: update tls.crt and tls.key together, from the same issuance.',
    ]);
  });

  it('warn when the release switches identity Secrets away from the mounted ones', () => {
    expect(findings({}, [], { server: 'old-agent', client: 'haptic-agent-client-tls' })).toEqual([
      'warning IdentitySecretsSwitched haproxy.agent.tls.serverSecretName: haptic-haproxy switches its agent identity from Secret old-agent to haptic-agent-server-tls: expect a rollout of haptic-controller and haptic-haproxy, and keep old-agent until both are ready.',
    ]);
  });
});
