/**
 * Who may talk to whom, each refusal with its reason: the agent refuses controllers with an
 * unknown CA, an expired certificate, a wrong SAN, a serverAuth-only certificate and the
 * agent's own certificate; trust with a deadline more than 24 hours ahead, and previous trust
 * past its deadline; plain HTTP and Basic authentication in TLS mode. The controller refuses
 * agents that present the wrong certificate, and never falls back to plain HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../../dev/lib/atomic-writer.ts';
import { encodeApply } from '../../../src/agent-api/apply-encoding.ts';
import { AgentClient } from '../../../src/controller/delivery/agent-client.ts';
import type { CertificateAuthority } from '../../../src/pki/index.ts';
import { TlsMaterialWatcher } from '../../../src/tls/material-watcher.ts';
import { rawRequest } from './raw-request.ts';
import { Replica } from './replica.ts';
import { type Site, makeSite, manyBackends, siteFiles } from './site.ts';
import {
  type Pair,
  authority,
  caPem,
  expiredLeaf,
  identitySecret,
  leaf,
  oldAuthority,
} from './test-pki.ts';

const root = mkdtempSync(join(tmpdir(), 'haptic-agent-peers-'));
const silent = pino({ level: 'silent' });
const watchers: TlsMaterialWatcher[] = [];
const clients: AgentClient[] = [];
let replica: Replica;
let legacy: Replica;
let ca: CertificateAuthority;
let agentPair: Pair;
let controllerPair: Pair;
let site: Site;

const hour = 3_600_000;
const rfc3339 = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/** An mTLS client presenting `pair`, trusting `trust`, expecting agent name haptic-agent. */
async function clientWith(name: string, files: Record<string, Uint8Array>): Promise<AgentClient> {
  const dir = join(root, 'controllers', name);
  await writeAtomicProjection(dir, files);
  const watcher = await TlsMaterialWatcher.start({ dir, logger: silent });
  watchers.push(watcher);
  const client = new AgentClient({ mode: 'mtls', material: watcher, serverName: 'haptic-agent' });
  clients.push(client);
  return client;
}

/** Projects agent material and waits until the agent reports it (by its identity fingerprint or validity). */
async function projectAgent(files: Record<string, Uint8Array>): Promise<void> {
  const before = replica
    .agentLogLines()
    .filter(
      (line) =>
        line.msg === 'TLS material loaded' ||
        (typeof line.msg === 'string' && line.msg.startsWith('TLS material unusable')),
    ).length;
  await writeAtomicProjection(replica.tlsDir, files);
  await expect
    .poll(
      () =>
        replica
          .agentLogLines()
          .filter(
            (line) =>
              line.msg === 'TLS material loaded' ||
              (typeof line.msg === 'string' && line.msg.startsWith('TLS material unusable')),
          ).length,
      { timeout: 5_000 },
    )
    .toBeGreaterThan(before);
}

function refusalLogged(code: string): boolean {
  return replica
    .agentLogLines()
    .some(
      (line) =>
        typeof line.msg === 'string' &&
        line.msg.startsWith('management request refused') &&
        line.code === code,
    );
}

const goodAgentMaterial = () => identitySecret(agentPair, [caPem(ca)]);

beforeAll(async () => {
  ca = await oldAuthority();
  agentPair = await leaf(ca, 'agent', 'haptic-agent');
  controllerPair = await leaf(ca, 'controller', 'haptic-controller');
  site = await makeSite(await authority());
  replica = await Replica.create(root, 'haproxy-0', '127.0.24.1', {
    clientName: 'haptic-controller',
  });
  await writeAtomicProjection(replica.tlsDir, goodAgentMaterial());
  await replica.startAgent();
  await replica.startHAProxy();
  legacy = await Replica.create(root, 'legacy-0', '127.0.24.2', {
    legacy: { username: 'admin', password: 's3cret' },
  });
  await legacy.startAgent();
  await legacy.startHAProxy();
});

afterAll(async () => {
  for (const client of clients) client.close();
  for (const watcher of watchers) watcher.close();
  await Promise.all([replica.stop(), legacy.stop()]);
  rmSync(root, { recursive: true, force: true });
});

describe('the agent refuses controllers that may not manage it', () => {
  it('accepts the controller identity it was told to (control case)', async () => {
    const client = await clientWith('good', identitySecret(controllerPair, [caPem(ca)]));
    const result = await client.apply(replica.endpoint(), encodeApply(siteFiles(site, 'peers')));
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true });
  });

  it.each([
    [
      'a certificate of an unknown CA',
      async () => leaf(await authority(), 'controller', 'haptic-controller'),
      403,
      'UnknownAuthority',
    ],
    [
      'an expired certificate',
      async () => expiredLeaf(ca, 'controller', 'haptic-controller'),
      403,
      'Expired',
    ],
    [
      'a certificate for another name',
      async () => leaf(ca, 'controller', 'intruder'),
      403,
      'NameMismatch',
    ],
    [
      'a serverAuth-only certificate with the controller name',
      async () => leaf(ca, 'agent', 'haptic-controller'),
      403,
      'WrongPurpose',
    ],
    ["the agent's own certificate", async () => Promise.resolve(agentPair), 403, 'WrongPurpose'],
  ])('refuses %s with its reason', async (_name, makePair, status, code) => {
    const pair = await makePair();
    const answer = await rawRequest({
      host: replica.address,
      port: replica.agentPort,
      cert: pair.crt,
      key: pair.key,
      ca: caPem(ca),
    });
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({
      error: {
        code,
        message: expect.stringMatching(/^The controller is not authorised: /) as unknown,
      },
    });
    await expect.poll(() => refusalLogged(code)).toBe(true);
  });

  it('refuses a connection without a client certificate', async () => {
    const answer = await rawRequest({
      host: replica.address,
      port: replica.agentPort,
      ca: caPem(ca),
    });
    expect(answer).toMatchObject({
      status: 401,
      body: { error: { reason: 'Unauthenticated', code: 'NoPeerCertificate' } },
    });
  });

  it('never accepts Basic authentication in TLS mode', async () => {
    const answer = await rawRequest({
      host: replica.address,
      port: replica.agentPort,
      cert: controllerPair.crt,
      key: controllerPair.key,
      ca: caPem(ca),
      headers: { authorization: `Basic ${Buffer.from('admin:s3cret').toString('base64')}` },
    });
    expect(answer).toMatchObject({
      status: 400,
      body: { error: { reason: 'BasicAuthNotAccepted' } },
    });
  });

  it('answers nothing to plain HTTP on its mTLS port', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const call = httpRequest(
        { host: replica.address, port: replica.agentPort, path: '/v1/state', agent: false },
        (response) => {
          resolve(`answered ${response.statusCode ?? 0}`);
        },
      );
      call.on('error', (error) => {
        resolve(`failed: ${error.message}`);
      });
      call.end();
    });
    // Node's TLS server answers a plain HTTP request with an HTTP 400 and closes; nothing else.
    expect(outcome).toMatch(/^(failed|answered 400)/);
    await expect
      .poll(() =>
        replica.agentLogLines().some((line) => line.msg === 'TLS handshake with a client failed'),
      )
      .toBe(true);
  });

  it('refuses a legacy (HTTP Basic) client on its mTLS port', async () => {
    const client = new AgentClient({
      mode: 'legacy-basic-auth',
      username: 'admin',
      password: 's3cret',
    });
    clients.push(client);
    const result = await client.state(replica.endpoint());
    expect(result.ok).toBe(false);
  });
});

describe("the agent's own trust", () => {
  it('refuses every operation while previous-ca-until is more than 24 hours ahead, then recovers', async () => {
    const client = await clientWith('deadline-far-ok', identitySecret(controllerPair, [caPem(ca)]));
    const previous = caPem(await authority());
    await projectAgent(
      identitySecret(agentPair, [caPem(ca)], {
        ca: previous,
        until: rfc3339(Date.now() + 25 * hour),
      }),
    );
    const refused = await client.apply(replica.endpoint(), encodeApply(siteFiles(site, 'peers')));
    expect(refused).toMatchObject({
      ok: false,
      error: {
        kind: 'http',
        status: 503,
        reason: 'TlsMaterialInvalid',
        message: expect.stringMatching(/more than 24 hours ahead/) as unknown,
      },
    });
    await expect.poll(() => refusalLogged('PreviousTrustDeadlineTooFar')).toBe(true);
    await projectAgent(goodAgentMaterial());
    expect((await client.apply(replica.endpoint(), encodeApply(siteFiles(site, 'peers')))).ok).toBe(
      true,
    );
  });

  it('trusts a previous CA until its deadline and not after', async () => {
    const previousCa = await authority();
    const oldController = await leaf(previousCa, 'controller', 'haptic-controller');
    const request = {
      host: replica.address,
      port: replica.agentPort,
      cert: oldController.crt,
      key: oldController.key,
      ca: caPem(ca),
    };
    await projectAgent(
      identitySecret(agentPair, [caPem(ca)], {
        ca: caPem(previousCa),
        until: rfc3339(Date.now() + hour),
      }),
    );
    expect((await rawRequest(request)).status).toBe(200);
    await projectAgent(
      identitySecret(agentPair, [caPem(ca)], {
        ca: caPem(previousCa),
        until: rfc3339(Date.now() - 1_000),
      }),
    );
    expect(await rawRequest(request)).toMatchObject({
      status: 403,
      body: { error: { code: 'UnknownAuthority' } },
    });
    await projectAgent(goodAgentMaterial());
  });
});

describe('revocation while a request is under way', () => {
  it('lets an authenticated apply finish, and refuses the next request', async () => {
    const previousCa = await authority();
    const oldController = await leaf(previousCa, 'controller', 'haptic-controller');
    await projectAgent(
      identitySecret(agentPair, [caPem(ca)], {
        ca: caPem(previousCa),
        until: rfc3339(Date.now() + hour),
      }),
    );
    const client = await clientWith('in-flight', identitySecret(oldController, [caPem(ca)]));
    const large = encodeApply(siteFiles(site, 'in-flight', { extra: manyBackends(3_000) }));
    const applied = () =>
      replica.agentLogLines().filter((line) => line.msg === 'configuration applied').length;
    const appliedBefore = applied();
    const applying = client.apply(replica.endpoint(), large);
    // Revoke the previous CA while HAProxy loads the large configuration.
    await expect
      .poll(
        () =>
          replica.agentLogLines().some((line) => line.msg === 'files in place, reloading HAProxy'),
        { timeout: 5_000, interval: 5 },
      )
      .toBe(true);
    await projectAgent(goodAgentMaterial());
    expect(await applying).toMatchObject({ ok: true, value: { changed: true } });
    await expect.poll(applied).toBe(appliedBefore + 1);
    const messages = replica.agentLogLines().map((line) => line.msg);
    expect(messages.lastIndexOf('TLS material loaded')).toBeLessThan(
      messages.lastIndexOf('configuration applied'),
    );
    expect(await client.state(replica.endpoint())).toMatchObject({
      ok: false,
      error: { status: 403, reason: 'Forbidden' },
    });
  });
});

describe('the controller refuses agents and its own bad material', () => {
  it.each([
    [
      'an agent certificate for another name',
      async () => leaf(ca, 'agent', 'impostor'),
      'NameMismatch',
    ],
    [
      'an agent certificate of an unknown CA',
      async () => leaf(await authority(), 'agent', 'haptic-agent'),
      'UnknownAuthority',
    ],
    [
      'a clientAuth-only certificate on the agent',
      async () => Promise.resolve(controllerPair),
      'WrongPurpose',
    ],
    [
      'an expired agent certificate',
      async () => expiredLeaf(ca, 'agent', 'haptic-agent'),
      'Expired',
    ],
  ])('refuses %s', async (_name, makePair, reason) => {
    const client = await clientWith(`agent-${reason}`, identitySecret(controllerPair, [caPem(ca)]));
    await projectAgent(identitySecret(await makePair(), [caPem(ca)]));
    try {
      const result = await client.apply(replica.endpoint(), encodeApply(siteFiles(site, 'peers')));
      expect(result).toMatchObject({ ok: false, error: { kind: 'tls', reason, retryable: false } });
    } finally {
      await projectAgent(goodAgentMaterial());
    }
  });

  it.each([
    [
      'its own expired identity',
      async () =>
        identitySecret(await expiredLeaf(ca, 'controller', 'haptic-controller'), [caPem(ca)]),
      'IdentityExpired',
    ],
    [
      'a previous-CA deadline more than 24 hours ahead',
      async () =>
        identitySecret(controllerPair, [caPem(ca)], {
          ca: caPem(await authority()),
          until: rfc3339(Date.now() + 25 * hour),
        }),
      'PreviousTrustDeadlineTooFar',
    ],
    [
      'a missing ca.crt',
      async () => Promise.resolve({ 'tls.crt': controllerPair.crt, 'tls.key': controllerPair.key }),
      'MaterialMissing',
    ],
  ])('sends nothing with %s', async (name, makeFiles, reason) => {
    const client = await clientWith(`local-${reason}`, await makeFiles());
    const before = replica.agentLogLines().length;
    const result = await client.apply(replica.endpoint(), encodeApply(siteFiles(site, name)));
    expect(result).toMatchObject({
      ok: false,
      error: { kind: 'local-material', reason, retryable: false },
    });
    expect(
      replica
        .agentLogLines()
        .slice(before)
        .some((line) => line.msg === 'TLS handshake with a client failed'),
    ).toBe(false);
  });

  it('never falls back to plain HTTP: an mTLS client fails against a plain-HTTP (legacy) agent', async () => {
    const client = await clientWith('vs-legacy', identitySecret(controllerPair, [caPem(ca)]));
    const result = await client.apply(legacy.endpoint(), encodeApply(siteFiles(site, 'peers')));
    expect(result).toMatchObject({ ok: false, error: { kind: 'tls' } });
    expect(legacy.agentLogLines().some((line) => line.msg === 'configuration applied')).toBe(false);
  });
});

describe('legacy mode (haproxy.agent.tls.enabled: false)', () => {
  it('accepts Basic credentials from DATAPLANE_USERNAME / DATAPLANE_PASSWORD and refuses others', async () => {
    const good = new AgentClient({
      mode: 'legacy-basic-auth',
      username: 'admin',
      password: 's3cret',
    });
    const bad = new AgentClient({
      mode: 'legacy-basic-auth',
      username: 'admin',
      password: 'guess',
    });
    clients.push(good, bad);
    expect(
      await good.apply(legacy.endpoint(), encodeApply(siteFiles(site, 'legacy'))),
    ).toMatchObject({ ok: true });
    expect(await bad.state(legacy.endpoint())).toMatchObject({
      ok: false,
      error: { status: 401, reason: 'Unauthenticated' },
    });
  });
});
