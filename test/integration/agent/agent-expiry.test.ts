/**
 * The spec's "Monitor renewal failures": with an expired identity the controller can't deliver,
 * running HAProxy workers keep their configuration, and the local-socket liveness probe keeps
 * the agent running so it loads the repaired identity — without a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../../dev/lib/atomic-writer.ts';
import { encodeApply } from '../../../src/agent-api/apply-encoding.ts';
import { AgentClient } from '../../../src/controller/delivery/agent-client.ts';
import type { CertificateAuthority } from '../../../src/pki/index.ts';
import { TlsMaterialWatcher } from '../../../src/tls/material-watcher.ts';
import { Replica, cliPath } from './replica.ts';
import { type Site, fetchSite, makeSite, siteFiles } from './site.ts';
import {
  type Pair,
  authority,
  caPem,
  expiredLeaf,
  identitySecret,
  leaf,
  oldAuthority,
} from './test-pki.ts';

const root = mkdtempSync(join(tmpdir(), 'haptic-agent-expiry-'));
const controllerDir = join(root, 'controller-tls');
let replica: Replica;
let watcher: TlsMaterialWatcher | undefined;
let client: AgentClient;
let ca: CertificateAuthority;
let controllerPair: Pair;
let site: Site;

async function health(): Promise<number> {
  const result = await execa(
    process.execPath,
    [cliPath, 'agent', 'health', `--local-socket=${replica.localSocket}`],
    { reject: false },
  );
  return result.exitCode ?? -1;
}

function starts(): number {
  return replica.agentLogLines().filter((line) => line.msg === 'agent starting').length;
}

beforeAll(async () => {
  ca = await oldAuthority();
  controllerPair = await leaf(ca, 'controller', 'haptic-controller');
  site = await makeSite(await authority());
  replica = await Replica.create(root, 'haproxy-0', '127.0.23.1', {
    clientName: 'haptic-controller',
  });
  await writeAtomicProjection(
    replica.tlsDir,
    identitySecret(await leaf(ca, 'agent', 'haptic-agent'), [caPem(ca)]),
  );
  await replica.startAgent();
  await replica.startHAProxy();
  await writeAtomicProjection(controllerDir, identitySecret(controllerPair, [caPem(ca)]));
  watcher = await TlsMaterialWatcher.start({
    dir: controllerDir,
    logger: pino({ level: 'silent' }),
  });
  client = new AgentClient({ mode: 'mtls', material: watcher, serverName: 'haptic-agent' });
  expect(
    await client.apply(replica.endpoint(), encodeApply(siteFiles(site, 'before-expiry'))),
  ).toMatchObject({ ok: true });
});

afterAll(async () => {
  client.close();
  watcher?.close();
  await replica.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('an expired identity', () => {
  it('of the agent: applies fail, health stays 0, HAProxy keeps serving; a repaired Secret is picked up without restart', async () => {
    await writeAtomicProjection(
      replica.tlsDir,
      identitySecret(await expiredLeaf(ca, 'agent', 'haptic-agent'), [caPem(ca)]),
    );
    await expect
      .poll(() => replica.agentLogLines().some((line) => line.reason === 'IdentityExpired'), {
        timeout: 5_000,
      })
      .toBe(true);
    const refused = await client.apply(
      replica.endpoint(),
      encodeApply(siteFiles(site, 'during-expiry')),
    );
    // A kept-alive connection reaches the agent, which refuses while its own identity is
    // expired; a new connection fails the controller's check of the agent's certificate.
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error.message).toMatch(/expired/);
    client.close(); // drops kept-alive connections; the next call connects anew
    const refusedFresh = await client.apply(
      replica.endpoint(),
      encodeApply(siteFiles(site, 'during-expiry')),
    );
    expect(refusedFresh).toMatchObject({ ok: false, error: { kind: 'tls', reason: 'Expired' } });
    expect(await health()).toBe(0);
    expect(await fetchSite(replica, site, 'https')).toBe('200 before-expiry ssl=1');

    await writeAtomicProjection(
      replica.tlsDir,
      identitySecret(await leaf(ca, 'agent', 'haptic-agent'), [caPem(ca)]),
    );
    await expect
      .poll(
        async () =>
          (await client.apply(replica.endpoint(), encodeApply(siteFiles(site, 'repaired')))).ok,
        { timeout: 5_000 },
      )
      .toBe(true);
    expect(await fetchSite(replica, site, 'https')).toBe('200 repaired ssl=1');
    expect(starts()).toBe(1);
  });

  it('of the controller: nothing is sent until its Secret is repaired, then applies succeed', async () => {
    await writeAtomicProjection(
      controllerDir,
      identitySecret(await expiredLeaf(ca, 'controller', 'haptic-controller'), [caPem(ca)]),
    );
    await expect
      .poll(async () => (await client.state(replica.endpoint())).ok, { timeout: 5_000 })
      .toBe(false);
    const refused = await client.apply(
      replica.endpoint(),
      encodeApply(siteFiles(site, 'controller-expired')),
    );
    expect(refused).toMatchObject({
      ok: false,
      error: { kind: 'local-material', reason: 'IdentityExpired' },
    });
    expect(await fetchSite(replica, site, 'http')).toBe('200 repaired ssl=0');
    expect(await health()).toBe(0);

    await writeAtomicProjection(
      controllerDir,
      identitySecret(await leaf(ca, 'controller', 'haptic-controller'), [caPem(ca)]),
    );
    await expect
      .poll(
        async () =>
          (
            await client.apply(
              replica.endpoint(),
              encodeApply(siteFiles(site, 'controller-repaired')),
            )
          ).ok,
        { timeout: 5_000 },
      )
      .toBe(true);
    expect(await fetchSite(replica, site, 'http')).toBe('200 controller-repaired ssl=0');
  });
});
