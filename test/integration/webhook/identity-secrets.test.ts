import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentIdentityConfig } from '../../../src/validation/index.ts';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import {
  type TestCa,
  b64,
  identityData,
  makeCa,
  makeLeaf,
  pem,
} from '../../unit/validation/material.ts';
import { encodePrivateKey } from '../../../src/pki/index.ts';
import { type RegisteredWebhook, registerWebhook } from './registered-webhook.ts';

const utc = (offsetMs: number): string =>
  `${new Date(Date.now() + offsetMs).toISOString().slice(0, 19)}Z`;
const hour = 3_600_000;

function identities(
  namespace: string,
  provider: AgentIdentityConfig['provider'],
): AgentIdentityConfig {
  return {
    namespace,
    provider,
    ...(provider === 'default' ? { issuerSecret: 'haptic-agent-ca' } : {}),
    serverSecret: 'agent-identity',
    clientSecret: 'controller-identity',
    serverName: 'agent.example.internal',
    clientName: 'controller.example.internal',
  };
}

function manifest(
  namespace: string,
  name: string,
  data: Record<string, string>,
  labels: Record<string, string> = {},
) {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name, namespace, labels },
    data,
  });
}

function patch(namespace: string, name: string, body: object) {
  return kubectl([
    'patch',
    'secret',
    name,
    '-n',
    namespace,
    '--type=merge',
    '-p',
    JSON.stringify(body),
  ]);
}

function denial(stderr: string): string {
  const marker = 'denied the request: ';
  return stderr.includes(marker)
    ? stderr.slice(stderr.indexOf(marker) + marker.length).trim()
    : `not denied: ${stderr}`;
}

describe('webhook for external identity Secrets, through the real API server', () => {
  let ns = '';
  let hook: RegisteredWebhook | undefined;
  let oldCa: TestCa;

  beforeAll(async () => {
    ns = await createTestNamespace('webhook-ext');
    hook = await registerWebhook(ns, identities(ns, 'external'));
    oldCa = await makeCa('old-ca', { at: new Date() });
    const agent = await makeLeaf('agent', 'agent.example.internal', oldCa, { at: new Date() });
    const controller = await makeLeaf('controller', 'controller.example.internal', oldCa, {
      at: new Date(),
    });
    for (const [name, leaf] of [
      ['agent-identity', agent],
      ['controller-identity', controller],
    ] as const) {
      const created = await kubectl(
        ['apply', '-f', '-'],
        manifest(ns, name, identityData({ leaf, trust: [oldCa.certificate] })),
      );
      expect(created.stderr).toBe('');
    }
  });

  afterAll(async () => {
    await hook?.stop();
  });

  it('denies a previous-ca-until 48 hours ahead', async () => {
    const newCa = await makeCa('new-ca', { at: new Date() });
    const result = await patch(ns, 'agent-identity', {
      data: {
        'ca.crt': b64(pem(newCa.certificate)),
        'previous-ca.crt': b64(pem(oldCa.certificate)),
        'previous-ca-until': b64(utc(48 * hour)),
      },
    });
    expect(result.exitCode).not.toBe(0);
    expect(denial(result.stderr)).toMatch(
      new RegExp(
        `^previous-ca-until of Secret ${ns}/agent-identity is \\S+Z, more than 24 hours after \\S+Z: HAPTIC rejects deadlines more than 24 hours away; choose a deadline within 24 hours, for example one hour ahead\\.$`,
      ),
    );
  });

  it('denies an unrelated CA in ca.crt', async () => {
    const unrelated = await makeCa('unrelated-ca', { at: new Date() });
    const result = await patch(ns, 'agent-identity', {
      data: { 'ca.crt': b64(pem(unrelated.certificate)) },
    });
    expect(denial(result.stderr)).toContain(
      `ca.crt of Secret ${ns}/agent-identity adds the CA CN=unrelated-ca, which is neither a CA the Secret trusts now (CN=old-ca) nor a renewal of one (same subject and key), and previous-ca.crt does not keep the current ca.crt`,
    );
  });

  it('denies an unrelated CA added beside the current one, and then alone', async () => {
    const unrelated = await makeCa('unrelated-ca', { at: new Date() });
    const beside = await patch(ns, 'agent-identity', {
      data: { 'ca.crt': b64(pem(oldCa.certificate, unrelated.certificate)) },
    });
    expect(denial(beside.stderr)).toContain(
      `ca.crt of Secret ${ns}/agent-identity adds the CA CN=unrelated-ca, which is neither a CA the Secret trusts now (CN=old-ca)`,
    );
    const smuggled = await patch(ns, 'agent-identity', {
      data: {
        'previous-ca.crt': b64(pem(unrelated.certificate)),
        'previous-ca-until': b64(utc(hour)),
      },
    });
    expect(denial(smuggled.stderr)).toContain(
      `previous-ca.crt of Secret ${ns}/agent-identity adds the CA CN=unrelated-ca, which the Secret does not trust now (CN=old-ca)`,
    );
    const alone = await patch(ns, 'agent-identity', {
      data: { 'ca.crt': b64(pem(unrelated.certificate)) },
    });
    expect(denial(alone.stderr)).toContain('adds the CA CN=unrelated-ca');
  });

  it('denies a key that does not match, with a server-side dry run', async () => {
    const agent = await makeLeaf('agent', 'agent.example.internal', oldCa, { at: new Date() });
    const other = await makeLeaf('agent', 'agent.example.internal', oldCa, { at: new Date() });
    const data = identityData({ leaf: agent, key: other.keys, trust: [oldCa.certificate] });
    const result = await kubectl(
      ['apply', '--dry-run=server', '-f', '-'],
      manifest(ns, 'agent-identity', data),
    );
    expect(denial(result.stderr)).toBe(
      `tls.key of Secret ${ns}/agent-identity does not belong to the agent certificate in tls.crt: update tls.crt and tls.key together, from the same issuance.`,
    );
  });

  it('denies an agent certificate without serverAuth', async () => {
    const wrong = await makeLeaf('controller', 'agent.example.internal', oldCa, { at: new Date() });
    const result = await patch(ns, 'agent-identity', {
      data: {
        'tls.crt': b64(pem(wrong.certificate)),
        'tls.key': b64(encodePrivateKey(wrong.keys.privateKey)),
      },
    });
    expect(denial(result.stderr)).toBe(
      `The agent certificate in Secret ${ns}/agent-identity does not verify against ca.crt: The certificate CN=agent.example.internal lacks the serverAuth extended key usage; reissue it with serverAuth.`,
    );
  });

  it('denies a provider marker on an external Secret', async () => {
    const result = await kubectl([
      'label',
      'secret',
      'agent-identity',
      '-n',
      ns,
      'haptic.haproxy.org/certificate-provider=default',
    ]);
    expect(denial(result.stderr)).toContain('use new Secret names when changing providers');
  });

  it("allows the guide's three-stage CA rotation on both Secrets", async () => {
    const newCa = await makeCa('rotated-ca', { at: new Date() });
    const deadline = utc(hour);
    for (const secret of ['agent-identity', 'controller-identity']) {
      const stage1 = await patch(ns, secret, {
        data: {
          'ca.crt': b64(pem(newCa.certificate)),
          'previous-ca.crt': b64(pem(oldCa.certificate)),
          'previous-ca-until': b64(deadline),
        },
      });
      expect(stage1.stderr).toBe('');
    }
    const leaves = {
      'agent-identity': await makeLeaf('agent', 'agent.example.internal', newCa, {
        at: new Date(),
      }),
      'controller-identity': await makeLeaf('controller', 'controller.example.internal', newCa, {
        at: new Date(),
      }),
    };
    for (const [secret, leaf] of Object.entries(leaves)) {
      const stage2 = await patch(ns, secret, {
        data: {
          'tls.crt': b64(pem(leaf.certificate)),
          'tls.key': b64(encodePrivateKey(leaf.keys.privateKey)),
        },
      });
      expect(stage2.stderr).toBe('');
    }
    for (const secret of Object.keys(leaves)) {
      const stage3 = await patch(ns, secret, {
        data: { 'previous-ca.crt': null, 'previous-ca-until': null },
      });
      expect(stage3.stderr).toBe('');
    }
    const trust = await kubectl([
      'get',
      'secret',
      'agent-identity',
      '-n',
      ns,
      '-o',
      'jsonpath={.data.ca\\.crt}',
    ]);
    expect(Buffer.from(trust.stdout, 'base64').toString()).toBe(pem(newCa.certificate));
  });
});

describe('webhook for default-provider Secrets, through the real API server', () => {
  let ns = '';
  let hook: RegisteredWebhook | undefined;

  beforeAll(async () => {
    ns = await createTestNamespace('webhook-def');
    hook = await registerWebhook(ns, identities(ns, 'default'));
  });

  afterAll(async () => {
    await hook?.stop();
  });

  it('allows a valid default-provider identity and denies a cert-manager annotation on it', async () => {
    const ca = await makeCa('haptic-agent-ca', { at: new Date() });
    const agent = await makeLeaf('agent', 'agent.example.internal', ca, { at: new Date() });
    const labels = { 'haptic.haproxy.org/certificate-provider': 'default' };
    const created = await kubectl(
      ['apply', '-f', '-'],
      manifest(
        ns,
        'agent-identity',
        identityData({ leaf: agent, trust: [ca.certificate] }),
        labels,
      ),
    );
    expect(created.stderr).toBe('');
    const annotated = await kubectl([
      'annotate',
      'secret',
      'agent-identity',
      '-n',
      ns,
      'cert-manager.io/certificate-name=haptic-agent-server',
    ]);
    expect(annotated.exitCode).not.toBe(0);
    expect(denial(annotated.stderr)).toBe(
      `Secret ${ns}/agent-identity is managed by the default provider (the renewal Job) (label haptic.haproxy.org/certificate-provider=default); this change would make it managed by both the default provider and cert-manager (label haptic.haproxy.org/certificate-provider=default, annotation cert-manager.io/certificate-name). ` +
        "A provider must not take over another provider's Secret: use new Secret names when changing providers, and keep the old Secrets until haptic-controller and haptic-haproxy are ready.",
    );
  });

  it('denies creating an unmarked Secret under a name the default provider manages', async () => {
    const ca = await makeCa('haptic-agent-ca', { at: new Date() });
    const controller = await makeLeaf('controller', 'controller.example.internal', ca, {
      at: new Date(),
    });
    const result = await kubectl(
      ['apply', '--dry-run=server', '-f', '-'],
      manifest(
        ns,
        'controller-identity',
        identityData({ leaf: controller, trust: [ca.certificate] }),
      ),
    );
    expect(denial(result.stderr)).toContain(
      `Secret ${ns}/controller-identity belongs to the default provider`,
    );
  });

  it('lets writes to other Secrets of the namespace through untouched', async () => {
    const result = await kubectl([
      'create',
      'secret',
      'generic',
      'unrelated',
      '-n',
      ns,
      '--from-literal=a=b',
    ]);
    expect(result.stderr).toBe('');
  });
});
