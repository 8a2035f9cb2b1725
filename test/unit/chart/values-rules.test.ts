import { describe, expect, it } from 'vitest';
import { toolPath } from '../../../dev/lib/tools.ts';
import { HapticError, errorCodes } from '../../../src/errors.ts';
import { renderChart } from '../../../src/render/index.ts';
import { helmBinaries, webhookCaBundle } from './chart-fixtures.ts';

const tls = (settings: Record<string, unknown>) => ({ haproxy: { agent: { tls: settings } } });

/** Each chart rule: values that break it, and the sentence `helm template` fails with. */
const rules: readonly (readonly [string, Record<string, unknown>, string])[] = [
  [
    'legacy Basic authentication without a credentials Secret',
    tls({ enabled: false }),
    'haproxy.agent.tls.enabled is false (legacy Basic authentication), which requires credentials.existingSecret: create a Secret with the keys dataplane_username and dataplane_password and set its name there; the chart never generates passwords.',
  ],
  [
    'external identities without the server Secret',
    tls({ managed: false, clientSecretName: 'c' }),
    'haproxy.agent.tls.serverSecretName is required when haproxy.agent.tls.managed is false: name the Secret that holds the agent identity (tls.crt, tls.key, ca.crt).',
  ],
  [
    'external identities without the client Secret',
    tls({ managed: false, serverSecretName: 's' }),
    'haproxy.agent.tls.clientSecretName is required when haproxy.agent.tls.managed is false: name the Secret that holds the controller identity (tls.crt, tls.key, ca.crt).',
  ],
  [
    'external identities and cert-manager at once',
    tls({
      managed: false,
      serverSecretName: 's',
      clientSecretName: 'c',
      certManager: { enabled: true },
    }),
    'haproxy.agent.tls.managed is false (external identities) but haproxy.agent.tls.certManager.enabled is true: choose one provider; set certManager.enabled to false to supply your own Secrets, or managed to true to let cert-manager issue them.',
  ],
  [
    'one Secret for both identities',
    tls({ managed: false, serverSecretName: 'same', clientSecretName: 'same' }),
    'haproxy.agent.tls.serverSecretName and haproxy.agent.tls.clientSecretName both name Secret "same": each Secret has exactly one owner; give them different names.',
  ],
  [
    'the issuer Secret reused as an identity',
    tls({ issuerSecretName: 'ca', serverSecretName: 'ca' }),
    'haproxy.agent.tls.issuerSecretName and haproxy.agent.tls.serverSecretName both name Secret "ca": each Secret has exactly one owner; give them different names.',
  ],
  [
    'equal agent and controller names',
    tls({ serverName: 'peer', clientName: 'peer' }),
    'haproxy.agent.tls.serverName and haproxy.agent.tls.clientName must differ (both are "peer"): an agent certificate must never authorise a controller operation.',
  ],
  [
    'an existing issuer without its name',
    tls({ certManager: { enabled: true, createIssuer: false } }),
    'haproxy.agent.tls.certManager.issuerRef.name is required when haproxy.agent.tls.certManager.createIssuer is false: give the name of your existing issuer.',
  ],
  [
    'an issuerRef while the chart creates the issuer',
    tls({ certManager: { enabled: true, issuerRef: { name: 'organisation' } } }),
    'haproxy.agent.tls.certManager.issuerRef.name is "organisation" but haproxy.agent.tls.certManager.createIssuer is true: set createIssuer to false to use that issuer, or remove issuerRef.name to let the chart create one.',
  ],
  [
    'an external webhook Secret without caBundle',
    { controller: { webhook: { secretName: 'wh' } } },
    'controller.webhook.caBundle is required with an external controller.webhook.secretName: set it to the base64-encoded PEM CA that signed the webhook certificate, or enable controller.webhook.certManager.',
  ],
  [
    'a caBundle that is not PEM',
    { controller: { webhook: { secretName: 'wh', caBundle: 'Zm9v' } } },
    'controller.webhook.caBundle must be a base64-encoded PEM certificate bundle, for example the output of `base64 -w0 webhook-ca.crt`.',
  ],
  [
    'a caBundle with cert-manager',
    { controller: { webhook: { caBundle: webhookCaBundle, certManager: { enabled: true } } } },
    'controller.webhook.caBundle is set but controller.webhook.certManager.enabled is true: cert-manager injects the CA bundle; remove caBundle.',
  ],
  [
    'a caBundle without a Secret',
    { controller: { webhook: { caBundle: webhookCaBundle } } },
    'controller.webhook.caBundle is set without controller.webhook.secretName: name the Secret that holds the webhook certificate (tls.crt, tls.key).',
  ],
  [
    'client-certificate authentication without a served webhook',
    {
      controller: {
        webhook: { enabled: false, clientAuth: { caSecretName: 'apiserver-client-ca' } },
      },
    },
    'controller.webhook.clientAuth.caSecretName is set but no webhook is served (controller.webhook.enabled is false): enable the webhook, or remove clientAuth.caSecretName.',
  ],
  [
    'the credentials Secret reused as the frontend certificate',
    { credentials: { existingSecret: 'shared' }, defaultSSLCertificate: { secretName: 'shared' } },
    'credentials.existingSecret and defaultSSLCertificate.secretName both name Secret "shared": each Secret has exactly one owner; give them different names.',
  ],
];

/** Schema violations, with the path helm names. */
const schemaViolations: readonly (readonly [string, Record<string, unknown>, string])[] = [
  [
    'an unknown top-level key',
    { controler: {} },
    "at '': additional properties 'controler' not allowed",
  ],
  [
    'an unknown nested key',
    tls({ certValidity: 30 }),
    "at '/haproxy/agent/tls': additional properties 'certValidity' not allowed",
  ],
  [
    'a string where a boolean belongs',
    tls({ enabled: 'yes' }),
    "at '/haproxy/agent/tls/enabled': got string, want boolean",
  ],
  [
    'a lifetime of 0 days',
    tls({ certValidityDays: 0 }),
    "at '/haproxy/agent/tls/certValidityDays': minimum: got 0, want 1",
  ],
  [
    'a lifetime over ten years',
    tls({ certValidityDays: 3651 }),
    "at '/haproxy/agent/tls/certValidityDays': maximum: got 3,651, want 3,650",
  ],
  [
    'a fractional lifetime',
    tls({ certValidityDays: 1.5 }),
    "at '/haproxy/agent/tls/certValidityDays': got number, want integer",
  ],
  [
    'a Secret name that is not a DNS name',
    tls({ serverSecretName: 'Agent_TLS' }),
    "at '/haproxy/agent/tls/serverSecretName': 'Agent_TLS' does not match pattern",
  ],
  [
    'a replica count as text',
    { haproxy: { replicas: 'two' } },
    "at '/haproxy/replicas': got string, want integer",
  ],
];

async function failure(binary: (typeof helmBinaries)[number], values: Record<string, unknown>) {
  try {
    await renderChart({ helmBin: toolPath(binary), values });
  } catch (error) {
    if (error instanceof HapticError) return error;
    throw error;
  }
  throw new Error('expected the render to fail');
}

describe.each(helmBinaries)('values rejected by %s template', (binary) => {
  it.each(rules)('fails on %s with one clear sentence', async (_, values, sentence) => {
    const error = await failure(binary, values);
    expect(error.code).toBe(errorCodes.RENDER_VALUES_INVALID);
    expect(error.message).toBe(`invalid values for release "haptic":\n- ${sentence}`);
  });

  it.each(schemaViolations)("rejects %s with helm's schema error", async (_, values, detail) => {
    const error = await failure(binary, values);
    expect(error.code).toBe(errorCodes.RENDER_VALUES_INVALID);
    expect(error.message).toContain("values don't meet the specifications of the schema(s)");
    expect(error.message).toContain(detail);
  });

  it('collects several rule violations into one message', async () => {
    const error = await failure(binary, {
      ...tls({ managed: false, serverName: 'x', clientName: 'x' }),
    });
    expect(error.message.split('\n- ')).toHaveLength(4);
  });
});
