/**
 * A real agent process reports in `GET /v1/state` what it has loaded for the mTLS link
 * (`tls.loaded`): fingerprints, serial and SAN as openssl prints them for the projected files,
 * the previous CA and its deadline, and the `..data` revision; and follows a new projection.
 */
import { readlinkSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../../dev/lib/atomic-writer.ts';
import { type TlsReport, parseTlsReport } from '../../../src/agent-api/tls-report.ts';
import { AgentClient } from '../../../src/controller/delivery/agent-client.ts';
import { TlsMaterialWatcher } from '../../../src/tls/material-watcher.ts';
import { eventually } from '../../support/eventually.ts';
import { Replica } from './replica.ts';
import { authority, caPem, identitySecret, specMaterial } from './test-pki.ts';

const root = mkdtempSync(join(tmpdir(), 'haptic-agent-tls-report-'));
let replica: Replica;
let watcher: TlsMaterialWatcher;
let client: AgentClient;
let material: Awaited<ReturnType<typeof specMaterial>>;
const previousCa = caPem(await authority());
const until = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');

async function openssl(args: readonly string[], input: Buffer): Promise<string> {
  return (await execa('openssl', ['x509', '-noout', ...args], { input })).stdout.trim();
}

const hex = (printed: string): string =>
  printed.replace(/^.*=/, '').replaceAll(':', '').toLowerCase();

async function loaded(): Promise<TlsReport> {
  const state = await client.state(replica.endpoint());
  if (!state.ok) throw new Error(state.error.message);
  const parsed = parseTlsReport(
    'loaded' in state.value.tls ? state.value.tls.loaded : undefined,
    'tls.loaded',
  );
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.report;
}

beforeAll(async () => {
  material = await specMaterial('haptic-agent', 'haptic-controller');
  replica = await Replica.create(root, 'haproxy-0', '127.0.22.1', {
    clientName: 'haptic-controller',
  });
  await writeAtomicProjection(
    replica.tlsDir,
    identitySecret(material.agent, [material.ca], { ca: previousCa, until }),
  );
  await replica.startAgent();
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
  watcher.close();
  await replica.stop();
  rmSync(root, { recursive: true, force: true });
  rmSync(material.dir, { recursive: true, force: true });
});

describe("the agent's loaded TLS report", () => {
  it('matches what openssl prints for the projected files', async () => {
    const report = await eventually('the agent answers', loaded, () => true, 30_000);
    expect(report).toEqual({
      revision: readlinkSync(join(replica.tlsDir, '..data')),
      valid: true,
      reason: null,
      caFingerprints: [hex(await openssl(['-fingerprint', '-sha256'], material.ca))],
      previousCaFingerprints: [hex(await openssl(['-fingerprint', '-sha256'], previousCa))],
      previousCaUntil: new Date(until).toISOString(),
      leaf: {
        serial: hex(await openssl(['-serial'], material.agent.crt)).replace(/^(00)+(?=.)/, ''),
        dnsNames: ['haptic-agent'],
        notAfter: new Date(
          await openssl(['-enddate'], material.agent.crt).then((d) => d.replace(/^notAfter=/, '')),
        ).toISOString(),
      },
      loadedAt: expect.any(String) as unknown,
    });
  });

  it('reports the new revision without previous trust once it is revoked', async () => {
    const before = await loaded();
    await writeAtomicProjection(replica.tlsDir, identitySecret(material.agent, [material.ca]));
    const after = await eventually(
      'the agent reports the revocation',
      loaded,
      (report) => report.previousCaFingerprints.length === 0,
      30_000,
    );
    expect(after.previousCaUntil).toBeNull();
    expect(after.revision).not.toBe(before.revision);
    expect(after.revision).toBe(readlinkSync(join(replica.tlsDir, '..data')));
  });
});
