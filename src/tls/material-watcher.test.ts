import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../dev/lib/atomic-writer.ts';
import { encodeCertificateChain, encodePrivateKey, issueCa, issueLeaf } from '../pki/index.ts';
import { type TlsMaterialSnapshot, TlsMaterialWatcher } from './material-watcher.ts';

const root = await mkdtemp(join(tmpdir(), 'haptic-watcher-'));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
const logger = pino({ level: 'silent' });
const now = new Date();

async function identity(): Promise<Record<string, Uint8Array>> {
  const ca = await issueCa({ commonName: 'haptic-agent-ca', validityDays: 30, now });
  const leaf = await issueLeaf({
    role: 'agent',
    dnsName: 'haptic-agent',
    issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
    validityDays: 10,
    now,
  });
  return {
    'tls.crt': Buffer.from(encodeCertificateChain([leaf.certificate])),
    'tls.key': Buffer.from(encodePrivateKey(leaf.keys.privateKey)),
    'ca.crt': Buffer.from(encodeCertificateChain([ca.certificate])),
  };
}

async function nextChange(watcher: TlsMaterialWatcher): Promise<TlsMaterialSnapshot> {
  return new Promise((resolve) => {
    const stop = watcher.onChange((snapshot) => {
      stop();
      resolve(snapshot);
    });
  });
}

describe('watching mounted TLS material', () => {
  // bench/certificate-reading.ts holds the time a swap takes under a second.
  it('loads eagerly, then takes a ..data swap without polling', async () => {
    const dir = join(root, 'swap');
    await writeAtomicProjection(dir, await identity());
    const watcher = await TlsMaterialWatcher.start({ dir, logger, pollIntervalMs: 3_600_000 });
    try {
      const first = watcher.current();
      expect(first.decoding.ok).toBe(true);
      const changed = nextChange(watcher);
      await writeAtomicProjection(dir, await identity());
      const snapshot = await changed;
      expect(snapshot.decoding.ok).toBe(true);
      expect(snapshot.revision).not.toBe(first.revision);
    } finally {
      watcher.close();
    }
  });

  it('reports no change when a new revision carries the same bytes', async () => {
    const dir = join(root, 'same');
    const files = await identity();
    await writeAtomicProjection(dir, files);
    const watcher = await TlsMaterialWatcher.start({ dir, logger, pollIntervalMs: 3_600_000 });
    try {
      await writeAtomicProjection(dir, files);
      await watcher.refresh();
      expect(watcher.counters().changes).toBe(1);
    } finally {
      watcher.close();
    }
  });

  it('replaces valid material with the problem of broken material (no stale trust)', async () => {
    const dir = join(root, 'broken');
    const files = await identity();
    await writeAtomicProjection(dir, files);
    const watcher = await TlsMaterialWatcher.start({ dir, logger, pollIntervalMs: 3_600_000 });
    try {
      await writeAtomicProjection(dir, { ...files, 'ca.crt': Buffer.from('not a certificate') });
      await watcher.refresh();
      expect(watcher.current().decoding).toMatchObject({ ok: false, reason: 'MaterialUnparsable' });
    } finally {
      watcher.close();
    }
  });

  it('starts without material and picks it up once projected', async () => {
    const dir = join(root, 'late');
    const watcher = await TlsMaterialWatcher.start({ dir, logger, pollIntervalMs: 50 });
    try {
      expect(watcher.current().decoding).toMatchObject({ ok: false, reason: 'MaterialMissing' });
      const changed = nextChange(watcher);
      await writeAtomicProjection(dir, await identity());
      expect((await changed).decoding.ok).toBe(true);
    } finally {
      watcher.close();
    }
  });
});
