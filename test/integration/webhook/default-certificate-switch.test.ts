/**
 * An operator leaves an external webhook certificate for the chart's own (controller.webhook
 * secretName and caBundle emptied): the hook Job issues a new CA and leaf, and the
 * registration keeps trusting the external CA beside it, so the API server reaches the
 * controller whichever certificate it serves during the rollout; afterwards the webhook still
 * answers through the API server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCertificateChain } from '../../../src/pki/index.ts';
import { kubectl } from '../../support/cluster.ts';
import { LocalSite, eventually } from '../controller/local-site.ts';

let site: LocalSite;

function badIngress(): Record<string, unknown> {
  return site.ingress('bad', [
    {
      host: 'bad.example.com',
      http: {
        paths: [
          {
            path: '/a b',
            pathType: 'Prefix',
            backend: { service: { name: 'alpha', port: { number: 80 } } },
          },
        ],
      },
    },
  ]);
}

function dryRun(object: Record<string, unknown>) {
  return kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(object));
}

/** The fingerprints of the CAs in each webhook's caBundle. */
async function registeredCas(): Promise<string[][]> {
  const result = await kubectl([
    ...['get', 'validatingwebhookconfiguration', `${site.namespace}-haptic-webhook`],
    ...['-o', 'jsonpath={.webhooks[*].clientConfig.caBundle}'],
  ]);
  expect(result.stderr).toBe('');
  return result.stdout
    .split(' ')
    .map((bundle) =>
      decodeCertificateChain(Buffer.from(bundle, 'base64').toString('utf8'), 'caBundle').map(
        (c) => c.sha256,
      ),
    );
}

beforeAll(async () => {
  site = await LocalSite.start('wh-switch', { webhook: true });
  await site.addBackend('alpha');
}, 240_000);

afterAll(async () => {
  await site.stop();
});

describe('a switch from an external webhook certificate to the chart’s own', () => {
  it('trusts both CAs across the rollout, and the webhook answers after it', async () => {
    const [external] = decodeCertificateChain(site.webhookCaPem, 'the external CA');
    await eventually(
      'the external certificate is served',
      () => dryRun(badIngress()),
      (result) => result.stderr.includes('denied'),
    );

    await site.upgrade([
      ...['--set', 'controller.webhook.secretName=', '--set', 'controller.webhook.caBundle='],
    ]);

    const secret = await kubectl([
      ...['get', 'secret', 'haptic-webhook-default-tls', '-n', site.namespace],
      ...['-o', 'jsonpath={.data.ca\\.crt}'],
    ]);
    const trust = decodeCertificateChain(
      Buffer.from(secret.stdout, 'base64').toString('utf8'),
      'ca.crt',
    ).map((c) => c.sha256);
    // The chart's new CA first, the external one kept while it is valid.
    expect(trust).toHaveLength(2);
    expect(trust[1]).toBe(external.sha256);
    for (const bundle of await registeredCas()) expect(bundle).toEqual(trust);

    // The API server picks the registration's change up asynchronously.
    const denied = await eventually(
      'the chart’s certificate is served and trusted',
      () => dryRun(badIngress()),
      (result) => result.exitCode !== 0,
    );
    expect(denied.stderr).toMatch(/admission webhook "ingresses\.haptic\.haproxy\.org" denied/);
  }, 300_000);
});
