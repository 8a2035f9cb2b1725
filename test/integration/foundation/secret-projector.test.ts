import { mkdtempSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { projectSecret } from '../../../dev/lib/secret-projector.ts';
import { adminKubeConfig, createTestNamespace } from '../../support/cluster.ts';

function files(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(join(dir, '..data')).map((key) => [key, readFileSync(join(dir, key), 'utf8')]),
  );
}

describe('Secret projector', () => {
  it('follows a Secret into each replica with the kubelet layout and its own delay', async () => {
    const ns = await createTestNamespace('projector');
    const kc = adminKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'identity' }, stringData: { 'tls.crt': 'one', 'ca.crt': 'ca-1' } },
    });
    const root = mkdtempSync(join(tmpdir(), 'projector-'));
    const fast = join(root, 'fast');
    const slow = join(root, 'slow');
    const projector = await projectSecret(kc, ns, 'identity', [
      { dir: fast },
      { dir: slow, delayMs: 1500 },
    ]);
    try {
      await projector.settled();
      expect(files(fast)).toEqual({ 'tls.crt': 'one', 'ca.crt': 'ca-1' });
      expect(readlinkSync(join(fast, '..data'))).toMatch(/^\.\.\d{4}_\d\d_\d\d_/);

      await core.replaceNamespacedSecret({
        name: 'identity',
        namespace: ns,
        body: { metadata: { name: 'identity' }, stringData: { 'tls.crt': 'two' } },
      });
      const changed = Date.now();
      await expect.poll(() => files(fast), { timeout: 5000 }).toEqual({ 'tls.crt': 'two' });
      expect(files(slow)).toEqual({ 'tls.crt': 'one', 'ca.crt': 'ca-1' });
      await expect.poll(() => files(slow), { timeout: 5000 }).toEqual({ 'tls.crt': 'two' });
      expect(Date.now() - changed).toBeGreaterThanOrEqual(1400);
      expect(readdirSync(slow).sort()).toEqual(
        ['..data', readlinkSync(join(slow, '..data')), 'tls.crt'].sort(),
      );
    } finally {
      await projector.stop();
    }
  });
});
