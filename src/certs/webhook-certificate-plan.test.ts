import { describe, expect, it } from 'vitest';
import { type Certificate, type CryptoKey, issueCa, issueLeaf } from '../pki/index.ts';
import type { Decoded } from '../secrets/material.ts';
import type { SecretProvider } from '../secrets/provider-markers.ts';
import {
  type WebhookCertificateDecision,
  type WebhookSecretView,
  planWebhookCertificate,
  webhookCertificateValidityDays,
  webhookRenewBeforeDays,
} from './webhook-certificate-plan.ts';

const dayMs = 86_400_000;
const issuedAt = new Date('2026-01-01T00:00:00Z');
const dnsName = 'haptic-webhook.haptic.svc';

const present = <T>(material: T): Decoded<T> => ({ state: 'present', material });

/** A CA and a leaf for `name` it signed, as the Job issues them. */
async function pair(name = dnsName, now = issuedAt, validityDays = webhookCertificateValidityDays) {
  const ca = await issueCa({ commonName: 'haptic-webhook-ca', validityDays, now });
  const leaf = await issueLeaf({
    role: 'webhook',
    dnsName: name,
    issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
    validityDays,
    now,
  });
  return { ca, leaf };
}

type Pair = Awaited<ReturnType<typeof pair>>;

function secretOf(
  { ca, leaf }: Pair,
  options: {
    provider?: SecretProvider;
    type?: string;
    trust?: readonly Certificate[];
    key?: CryptoKey;
  } = {},
): WebhookSecretView {
  return {
    label: 'haptic/haptic-webhook-default-tls',
    provider: options.provider ?? 'default',
    type: options.type ?? 'kubernetes.io/tls',
    keyPair: present({
      chain: [leaf.certificate] as const,
      privateKey: options.key ?? leaf.keys.privateKey,
    }),
    trust: present(options.trust ?? [ca.certificate]),
  };
}

function plan(
  secret: WebhookSecretView | undefined,
  now: Date,
  registered: readonly Decoded<readonly Certificate[]>[] = [],
): WebhookCertificateDecision {
  return planWebhookCertificate({ secret, dnsName, registered, now });
}

const fingerprints = (decision: WebhookCertificateDecision): string[] =>
  decision.action === 'issue' ? decision.previousTrust.map((c) => c.sha256) : [];

describe('planWebhookCertificate', () => {
  it('keeps a valid certificate for the Service, with its ca.crt as the caBundle', async () => {
    const current = await pair();
    const decision = plan(secretOf(current), new Date(issuedAt.getTime() + 30 * dayMs));
    expect(decision).toEqual({ action: 'keep', trust: [current.ca.certificate] });
  });

  it('issues when the Secret does not exist, trusting what the registration trusts meanwhile', async () => {
    // A switch from another source: the controller still serves that source's certificate.
    const other = await pair();
    const now = new Date(issuedAt.getTime() + dayMs);
    const decision = plan(undefined, now, [present([other.ca.certificate])]);
    expect(decision).toMatchObject({ action: 'issue', reason: 'the Secret does not exist' });
    expect(fingerprints(decision)).toEqual([other.ca.certificate.sha256]);
    expect(fingerprints(plan(undefined, now))).toEqual([]);
  });

  it('renews within a year of expiry and keeps the old CA, once, while it is valid', async () => {
    const current = await pair();
    const renewAt = new Date(
      current.leaf.certificate.notAfter.getTime() - webhookRenewBeforeDays * dayMs,
    );
    expect(plan(secretOf(current), new Date(renewAt.getTime() - dayMs)).action).toBe('keep');
    const decision = plan(secretOf(current), renewAt, [present([current.ca.certificate])]);
    expect(decision.action === 'issue' ? decision.reason : '').toMatch(
      /expires at .* within 365 days/,
    );
    expect(fingerprints(decision)).toEqual([current.ca.certificate.sha256]);
  });

  it('drops expired CAs from the trust it keeps', async () => {
    const expired = await pair(dnsName, new Date(issuedAt.getTime() - 40 * dayMs), 30);
    const current = await pair();
    const secret = secretOf(current, { trust: [expired.ca.certificate] });
    // The leaf is not signed by a CA of ca.crt: issue, keeping no expired CA.
    const decision = plan(secret, issuedAt, [present([expired.ca.certificate])]);
    expect(decision).toMatchObject({
      action: 'issue',
      reason: 'its certificate is not signed by a CA of its ca.crt',
    });
    expect(fingerprints(decision)).toEqual([]);
  });

  it('issues for a certificate of another name, or whose key does not match', async () => {
    const otherName = await pair('haptic-webhook.elsewhere.svc');
    expect(plan(secretOf(otherName), issuedAt).action).toBe('issue');
    const current = await pair();
    const stranger = await pair();
    const decision = plan(secretOf(current, { key: stranger.leaf.keys.privateKey }), issuedAt);
    expect(decision).toMatchObject({
      action: 'issue',
      reason: 'its tls.key does not belong to the certificate in tls.crt',
    });
  });

  it('refuses a Secret the chart did not label as its own, naming the way out', async () => {
    const decision = plan(secretOf(await pair(), { provider: 'external' }), issuedAt);
    expect(decision.action === 'refuse' ? decision.message : '').toMatch(
      /^Secret haptic\/haptic-webhook-default-tls is managed by .*Delete it to let the chart issue its own/,
    );
  });

  it('refuses its own Secret of another type, which no write could fix', async () => {
    const decision = plan(secretOf(await pair(), { type: 'Opaque' }), issuedAt);
    expect(decision.action === 'refuse' ? decision.message : '').toBe(
      'Secret haptic/haptic-webhook-default-tls is of type Opaque, not kubernetes.io/tls, and a ' +
        "Secret's type cannot change. Delete it and run the install or upgrade again: the chart " +
        'issues a new one.',
    );
  });
});
