/**
 * cert-manager's own writes to the release's identity and issuer Secrets, through the real API
 * server and the fail-closed identity webhook, shaped exactly as cert-manager v1.21 makes them
 * (test/support/cert-manager-secret.ts): issue, renewal with a new key, root renewal with the
 * same key, an outage of the webhook, and an existing issuer with an intermediate CA.
 *
 * Decision (the chart's webhook registration keeps failurePolicy Fail for cert-manager): every
 * valid write of issue, renewal and root renewal is admitted; an outage of the webhook only
 * delays cert-manager (it retries a refused write with backoff, 5 s to 5 min), because nothing the
 * webhook needs to come back is among the writes it blocks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolPath } from '../../../dev/lib/tools.ts';
import { crossSignCa, issueLeaf, type Certificate } from '../../../src/pki/index.ts';
import { renderChart } from '../../../src/render/index.ts';
import type { AgentIdentityConfig } from '../../../src/validation/index.ts';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { type TestCa, makeCa } from '../../unit/validation/material.ts';
import {
  type CertManagerIssue,
  applyAsCertManager,
  certManagerFieldManager,
} from '../../support/cert-manager-secret.ts';
import { type RegisteredWebhook, registerWebhook } from './registered-webhook.ts';

const dayMs = 86_400_000;

type Issued = CertManagerIssue;

async function admitted(namespace: string, issued: Issued): Promise<void> {
  const result = await applyAsCertManager(namespace, issued);
  expect(result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
}

function denial(stderr: string): string {
  const marker = 'denied the request: ';
  return stderr.includes(marker) ? stderr.slice(stderr.indexOf(marker) + marker.length) : stderr;
}

const names = { server: 'haptic-agent', client: 'haptic-controller' } as const;

function identities(namespace: string, issuerSecret?: string): AgentIdentityConfig {
  return {
    namespace,
    provider: 'cert-manager',
    ...(issuerSecret === undefined ? {} : { issuerSecret }),
    serverSecret: 'haptic-agent-server-tls',
    clientSecret: 'haptic-agent-client-tls',
    serverName: names.server,
    clientName: names.client,
  };
}

/** The root Certificate as the chart's self-signed Issuer issues it into the issuer Secret. */
function rootIssued(root: TestCa): Issued {
  return {
    secret: 'haptic-agent-ca',
    certificateName: 'haptic-agent-ca',
    issuer: { name: 'haptic-selfsigned', kind: 'Issuer' },
    chain: [root.certificate],
    keys: root.keys,
    ca: root.certificate,
    templateLabels: { 'haptic.haproxy.org/certificate-authority': 'true' },
  };
}

/** An identity as a CA Issuer issues it: signed by `signer`, ca.crt the root. */
async function identityIssued(
  role: 'server' | 'client',
  signer: TestCa,
  root: Certificate,
  issuer: Issued['issuer'],
  intermediates: readonly Certificate[] = [],
): Promise<Issued> {
  const dnsName = names[role];
  const leaf = await issueLeaf({
    role: role === 'server' ? 'agent' : 'controller',
    dnsName,
    issuer: { certificate: signer.certificate, privateKey: signer.keys.privateKey },
    validityDays: 90,
    now: new Date(),
  });
  return {
    secret: `haptic-agent-${role}-tls`,
    certificateName: `haptic-agent-${role}`,
    issuer,
    chain: [leaf.certificate, ...intermediates],
    keys: leaf.keys,
    ca: root,
    dnsNames: [dnsName],
  };
}

describe('cert-manager v1.21 writes under the fail-closed identity webhook (chart-created issuer)', () => {
  let ns = '';
  let hook: RegisteredWebhook | undefined;
  let root: TestCa;
  const caIssuer = { name: 'haptic-agent-ca', kind: 'Issuer' } as const;

  beforeAll(async () => {
    ns = await createTestNamespace('cm-writes');
    hook = await registerWebhook(ns, identities(ns, 'haptic-agent-ca'));
    root = await makeCa('haptic-agent-ca', { at: new Date(), days: 3650 });
  });

  afterAll(async () => {
    await hook?.stop();
  });

  it('admits the root, then both identities, as first issued', async () => {
    await admitted(ns, rootIssued(root));
    await admitted(ns, await identityIssued('server', root, root.certificate, caIssuer));
    await admitted(ns, await identityIssued('client', root, root.certificate, caIssuer));
    const stored = await kubectl([
      'get',
      'secret',
      'haptic-agent-server-tls',
      '-n',
      ns,
      '-o',
      'jsonpath={.metadata.managedFields[0].manager} {.type}',
    ]);
    expect(stored.stdout).toBe(`${certManagerFieldManager} kubernetes.io/tls`);
  });

  it('admits identity renewals with a new private key each time', async () => {
    for (let round = 0; round < 2; round += 1) {
      await admitted(ns, await identityIssued('server', root, root.certificate, caIssuer));
      await admitted(ns, await identityIssued('client', root, root.certificate, caIssuer));
    }
  });

  it('admits the root renewal (same key) and the identity renewals that distribute it', async () => {
    const renewed = await makeCa('haptic-agent-ca', {
      at: new Date(Date.now() + 60_000),
      days: 3650,
      keys: root.keys,
    });
    await admitted(ns, rootIssued(renewed));
    // One identity at a time, as cert-manager renews them independently.
    await admitted(ns, await identityIssued('server', renewed, renewed.certificate, caIssuer));
    await admitted(ns, await identityIssued('client', renewed, renewed.certificate, caIssuer));
  });

  it('denies a write that is not valid: an identity from an unrelated CA, naming ca.crt', async () => {
    const stranger = await makeCa('haptic-agent-ca', { at: new Date() });
    const result = await applyAsCertManager(
      ns,
      await identityIssued('server', stranger, stranger.certificate, caIssuer),
    );
    expect(result.exitCode).not.toBe(0);
    expect(denial(result.stderr)).toMatch(
      new RegExp(
        `ca\\.crt of Secret ${ns}/haptic-agent-server-tls adds the CA CN=haptic-agent-ca, which is neither a CA the Secret trusts now`,
      ),
    );
  });

  it('refuses writes while the webhook is down and admits the same write once it is back', async () => {
    const current = hook;
    if (current === undefined) throw new Error('the webhook did not start');
    const write = await identityIssued('server', root, root.certificate, caIssuer);
    await current.server.close();
    const refused = await applyAsCertManager(ns, write);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain(
      'failed calling webhook "agent-identity-secrets.haptic.haproxy.org"',
    );
    // The webhook comes back (a new controller Pod): cert-manager's next retry goes through.
    hook = await registerWebhook(ns, identities(ns, 'haptic-agent-ca'));
    await admitted(ns, write);
  });
});

describe('cert-manager v1.21 writes from an existing issuer with an intermediate CA', () => {
  it('admits identities whose tls.crt carries the intermediate after the leaf, ca.crt the root', async () => {
    const ns = await createTestNamespace('cm-chain');
    const hook = await registerWebhook(ns, identities(ns));
    try {
      const root = await makeCa('organisation-root', { at: new Date(), days: 3650 });
      const own = await makeCa('organisation-issuing', { at: new Date(), days: 1000 });
      const intermediate: TestCa = {
        certificate: await crossSignCa({
          certificate: own.certificate,
          issuer: { certificate: root.certificate, privateKey: root.keys.privateKey },
          notBefore: new Date(Date.now() - 60_000),
          notAfter: new Date(Date.now() + 900 * dayMs),
        }),
        keys: own.keys,
      };
      const organisation = { name: 'organisation', kind: 'ClusterIssuer' } as const;
      for (const role of ['server', 'client'] as const) {
        await admitted(
          ns,
          await identityIssued(role, intermediate, root.certificate, organisation, [
            intermediate.certificate,
          ]),
        );
      }
      // Without the intermediate, the leaf does not chain to ca.crt: denied with the reason.
      const broken = await applyAsCertManager(
        ns,
        await identityIssued('server', intermediate, root.certificate, organisation),
      );
      expect(denial(broken.stderr)).toMatch(
        /The agent certificate in Secret \S+\/haptic-agent-server-tls does not verify against ca\.crt: The certificate CN=haptic-agent \(issuer CN=organisation-issuing\) is not signed by a trusted CA: issue it from a trusted CA \(ca\.crt\), or, when CN=organisation-issuing is an intermediate CA of a trusted one, send that intermediate after the certificate in tls\.crt\./,
      );
    } finally {
      await hook.stop();
    }
  });
});

describe('the chart in cert-manager mode: the webhook never waits on a write it blocks', () => {
  it('matches only the identity and issuer Secrets, and the controller starts without them', async () => {
    const { objects } = await renderChart({
      helmBin: toolPath('helm'),
      namespace: 'haptic',
      values: {
        haproxy: { agent: { tls: { certManager: { enabled: true } } } },
        controller: { webhook: { certManager: { enabled: true } } },
      },
    });
    const registration = objects.find((o) => o.kind === 'ValidatingWebhookConfiguration');
    const webhooks = (registration?.body as { webhooks?: unknown[] } | undefined)?.webhooks ?? [];
    const identity = webhooks.find(
      (w) => (w as { name?: string }).name === 'agent-identity-secrets.haptic.haproxy.org',
    ) as { failurePolicy: string; matchConditions: { expression: string }[] } | undefined;
    expect(identity?.failurePolicy).toBe('Fail');
    expect(identity?.matchConditions.map((c) => c.expression)).toEqual([
      'request.name in ["haptic-agent-ca","haptic-agent-server-tls","haptic-agent-client-tls"]',
    ]);
    // The webhook's own serving certificate (cert-manager writes it too) is not among them.
    const serving = objects.find(
      (o) => o.kind === 'Certificate' && o.metadata.name === 'haptic-webhook',
    );
    const servingSecret = (serving?.body as { spec?: { secretName?: string } } | undefined)?.spec
      ?.secretName;
    expect(servingSecret).toBeDefined();
    expect(identity?.matchConditions[0]?.expression).not.toContain(`"${servingSecret ?? ''}"`);
    // The controller (which serves the webhook) mounts the identity as an optional volume.
    const controller = objects.find(
      (o) => o.kind === 'Deployment' && o.metadata.name === 'haptic-controller',
    );
    const volumes =
      (
        controller?.body as
          | {
              spec?: {
                template?: {
                  spec?: { volumes?: { name: string; secret?: { optional?: boolean } }[] };
                };
              };
            }
          | undefined
      )?.spec?.template?.spec?.volumes ?? [];
    expect(volumes.find((v) => v.name === 'agent-tls')?.secret?.optional).toBe(true);
  });
});
