/**
 * Two agent + HAProxy replicas, real TLS, real reloads: applying, unchanged content, a
 * configuration HAProxy rejects, a forbidden directive, removed files, and an agent restart.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../../dev/lib/atomic-writer.ts';
import type { AgentStateBody } from '../../../src/agent-api/api-types.ts';
import { encodeApply } from '../../../src/agent-api/apply-encoding.ts';
import { AgentClient } from '../../../src/controller/delivery/agent-client.ts';
import { applyToAgents } from '../../../src/controller/delivery/agent-fanout.ts';
import { TlsMaterialWatcher } from '../../../src/tls/material-watcher.ts';
import { Replica, cliPath } from './replica.ts';
import { type Site, fetchSite, makeSite, siteFiles } from './site.ts';
import { authority, identitySecret, specMaterial } from './test-pki.ts';

const root = mkdtempSync(join(tmpdir(), 'haptic-agent-apply-'));
const replicas: Replica[] = [];
let watcher: TlsMaterialWatcher | undefined;
let client: AgentClient;
let site: Site;

async function state(replica: Replica): Promise<AgentStateBody> {
  const result = await client.state(replica.endpoint());
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

beforeAll(async () => {
  const material = await specMaterial('haptic-agent', 'haptic-controller');
  site = await makeSite(await authority());
  for (const [index, address] of ['127.0.20.1', '127.0.20.2'].entries()) {
    const replica = await Replica.create(root, `haproxy-${index}`, address, {
      clientName: 'haptic-controller',
    });
    replicas.push(replica);
    await writeAtomicProjection(replica.tlsDir, identitySecret(material.agent, [material.ca]));
    await replica.startAgent();
    await replica.startHAProxy();
  }
  const controllerDir = join(root, 'controller-tls');
  await writeAtomicProjection(controllerDir, identitySecret(material.controller, [material.ca]));
  watcher = await TlsMaterialWatcher.start({
    dir: controllerDir,
    logger: pino({ level: 'silent' }),
  });
  client = new AgentClient({ mode: 'mtls', material: watcher, serverName: 'haptic-agent' });
});

afterAll(async () => {
  client.close();
  watcher?.close();
  await Promise.all(replicas.map((replica) => replica.stop()));
  rmSync(root, { recursive: true, force: true });
});

const endpoints = () => replicas.map((replica) => replica.endpoint());

describe('applying configurations to agents beside HAProxy', () => {
  it('applies a configuration that serves HTTP and HTTPS through both replicas', async () => {
    const results = await applyToAgents(client, endpoints(), encodeApply(siteFiles(site, 'v1')));
    for (const result of results) {
      expect(result, JSON.stringify(result)).toMatchObject({
        ok: true,
        response: { changed: true, reloaded: true },
      });
    }
    for (const replica of replicas) {
      expect(await fetchSite(replica, site, 'http')).toBe('200 v1 ssl=0');
      expect(await fetchSite(replica, site, 'https')).toBe('200 v1 ssl=1');
      const reported = await state(replica);
      expect(reported.files.map((file) => file.path)).toEqual([
        'haproxy.cfg',
        'maps/hosts.map',
        'ssl/site.pem',
      ]);
      expect(reported.tls).toMatchObject({
        mode: 'mtls',
        valid: true,
        clientName: 'haptic-controller',
      });
    }
  });

  it('neither writes nor reloads when the content is unchanged', async () => {
    const before = await Promise.all(replicas.map(state));
    const results = await applyToAgents(client, endpoints(), encodeApply(siteFiles(site, 'v1')));
    expect(results.map((result) => result.ok && result.response.changed)).toEqual([false, false]);
    const after = await Promise.all(replicas.map(state));
    expect(after.map((s) => s.haproxy.reachable && s.haproxy.master.reloads)).toEqual(
      before.map((s) => s.haproxy.reachable && s.haproxy.master.reloads),
    );
    expect(after.map((s) => s.generation)).toEqual(before.map((s) => s.generation));
  });

  it("keeps serving the previous configuration when HAProxy rejects one, answering with HAProxy's message", async () => {
    const before = await Promise.all(replicas.map(state));
    const bad = siteFiles(site, 'v-bad', { extra: '  balance no-such-algorithm\n' });
    const results = await applyToAgents(client, endpoints(), encodeApply(bad));
    for (const result of results) {
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.attempts).toBe(1);
      expect(result.error).toMatchObject({ kind: 'http', reason: 'ConfigRejected', status: 422 });
      expect(result.error.haproxyMessage).toMatch(/haproxy\.cfg:\d+.*balance/);
    }
    for (const [index, replica] of replicas.entries()) {
      expect(await fetchSite(replica, site, 'http')).toBe('200 v1 ssl=0');
      const after = await state(replica);
      expect(after.configDigest).toBe(before[index]?.configDigest);
      expect(after.generation).toBe(before[index]?.generation);
      expect(readFileSync(join(replica.baseDir, 'haproxy.cfg'), 'utf8')).toContain('"v1 ssl=');
    }
  });

  it('refuses code-loading directives before HAProxy parses them', async () => {
    const before = await Promise.all(replicas.map(state));
    const evil = siteFiles(site, 'v-evil', { extra: 'program evil\n  command /bin/sh -c id\n' });
    const results = await applyToAgents(client, endpoints(), encodeApply(evil));
    for (const result of results) {
      expect(result).toMatchObject({
        ok: false,
        error: { reason: 'ConfigForbidden', status: 422 },
      });
    }
    const after = await Promise.all(replicas.map(state));
    expect(after.map((s) => s.haproxy.reachable && s.haproxy.master.reloads)).toEqual(
      before.map((s) => s.haproxy.reachable && s.haproxy.master.reloads),
    );
  });

  it('removes files that leave the set', async () => {
    const notes = { path: 'extra/notes.txt', content: Buffer.from('temporary') };
    let results = await applyToAgents(
      client,
      endpoints(),
      encodeApply(siteFiles(site, 'v2', { more: [notes] })),
    );
    expect(results.every((result) => result.ok)).toBe(true);
    expect(replicas.every((replica) => existsSync(join(replica.baseDir, 'extra/notes.txt')))).toBe(
      true,
    );
    results = await applyToAgents(client, endpoints(), encodeApply(siteFiles(site, 'v3')));
    expect(results.every((result) => result.ok)).toBe(true);
    expect(replicas.some((replica) => existsSync(join(replica.baseDir, 'extra/notes.txt')))).toBe(
      false,
    );
    for (const replica of replicas)
      expect(await fetchSite(replica, site, 'https')).toBe('200 v3 ssl=1');
  });

  it('keeps the running configuration across an agent restart and reports it', async () => {
    const [replica] = replicas;
    if (replica === undefined) throw new Error('no replica');
    const before = await state(replica);
    await replica.stopAgent();
    expect(await fetchSite(replica, site, 'http')).toBe('200 v3 ssl=0');
    await replica.startAgent();
    const after = await state(replica);
    expect(after).toMatchObject({
      generation: before.generation,
      configDigest: before.configDigest,
      appliedAt: before.appliedAt,
      files: before.files,
    });
    expect(after.haproxy.reachable && after.haproxy.workers.map((w) => w.pid)).toEqual(
      before.haproxy.reachable && before.haproxy.workers.map((w) => w.pid),
    );
    expect(await fetchSite(replica, site, 'https')).toBe('200 v3 ssl=1');
    const cli = await execa(process.execPath, [
      cliPath,
      'agent',
      'state',
      `--local-socket=${replica.localSocket}`,
    ]);
    expect(JSON.parse(cli.stdout)).toMatchObject({
      generation: before.generation,
      configDigest: before.configDigest,
    });
    const unchanged = await applyToAgents(
      client,
      [replica.endpoint()],
      encodeApply(siteFiles(site, 'v3')),
    );
    expect(unchanged[0]).toMatchObject({ ok: true, response: { changed: false } });
  });
});
