/**
 * The webhook reloads its serving certificate when the kubelet projects a new one (the
 * atomic-writer `..data` swap), through the shared watcher; a pair that does not validate is
 * not served.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../../dev/lib/atomic-writer.ts';
import { encodeCertificateChain, encodePrivateKey, issueLeaf } from '../../../src/pki/index.ts';
import { startWebhook, watchServingCertificate } from '../../../src/webhook/index.ts';
import { type TestCa, makeCa } from '../../unit/validation/material.ts';

const logs: string[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(line) });

async function pair(ca: TestCa, name: string) {
  const leaf = await issueLeaf({
    role: 'agent',
    dnsName: name,
    issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
    validityDays: 1,
    now: new Date(),
  });
  return {
    'tls.crt': Buffer.from(encodeCertificateChain([leaf.certificate])),
    'tls.key': Buffer.from(encodePrivateKey(leaf.keys.privateKey)),
    'ca.crt': Buffer.from(encodeCertificateChain([ca.certificate])),
  };
}

function servedName(port: number, ca: TestCa): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      {
        host: '127.0.0.1',
        port,
        ca: encodeCertificateChain([ca.certificate]),
        servername: 'localhost',
        checkServerIdentity: () => undefined,
      },
      () => {
        const subject = socket.getPeerCertificate().subject.CN;
        socket.end();
        resolve(Array.isArray(subject) ? subject.join(',') : (subject ?? ''));
      },
    );
    socket.on('error', reject);
  });
}

const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

describe('webhook serving certificate', () => {
  it('follows a projected Secret and refuses a pair that does not match', async () => {
    const ca = await makeCa('serving-ca', { at: new Date() });
    const dir = join(mkdtempSync(join(tmpdir(), 'webhook-tls-')), 'webhook-tls');
    await writeAtomicProjection(dir, await pair(ca, 'first'));
    const certificates = await watchServingCertificate({ dir, logger, pollIntervalMs: 200 });
    cleanup.push(() => {
      certificates.close();
    });
    const server = await startWebhook({}, { host: '127.0.0.1', port: 0, certificates });
    cleanup.push(() => server.close());
    expect(await servedName(server.port, ca)).toBe('first');

    await writeAtomicProjection(dir, await pair(ca, 'second'));
    await expect.poll(() => servedName(server.port, ca), { timeout: 5000 }).toBe('second');

    const third = await pair(ca, 'third');
    const fourth = await pair(ca, 'fourth');
    await writeAtomicProjection(dir, { ...third, 'tls.key': fourth['tls.key'] });
    await expect
      .poll(
        () =>
          logs.some((line) =>
            line.includes('tls.key does not belong to the certificate in tls.crt'),
          ),
        { timeout: 5000 },
      )
      .toBe(true);
    expect(await servedName(server.port, ca)).toBe('second');
    expect(
      logs.filter((line) => line.includes('webhook serving certificate reloaded')),
    ).toHaveLength(1);
  });

  it('fails fast at start-up without a usable pair', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-empty-'));
    await expect(watchServingCertificate({ dir, logger })).rejects.toThrow(
      `The webhook serving certificate in ${dir} is unusable: tls.crt is missing. Mount a Secret with tls.crt and tls.key (--cert-dir).`,
    );
  });
});
