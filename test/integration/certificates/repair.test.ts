import { describe, expect, it } from 'vitest';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { type SelfSigned, selfSignedCertificate } from '../../support/self-signed.ts';
import { peersAuthenticate } from './peer-verification.ts';
import {
  type Snapshot,
  actions,
  after,
  fingerprint,
  generation,
  names,
  readSecrets,
  renew,
  summary,
  t0,
  text,
  versions,
  written,
} from './renewal-harness.ts';

const b64 = (value: string): string => Buffer.from(value).toString('base64');

/** A self-signed certificate and key made with openssl, unrelated to any CA of the run. */
function foreignCertificate(): Promise<SelfSigned> {
  return selfSignedCertificate('haptic-agent', {
    days: 3650,
    extensions: ['extendedKeyUsage=serverAuth'],
  });
}

async function patchData(
  ns: string,
  name: string,
  data: Record<string, string | null>,
): Promise<void> {
  const result = await kubectl([
    'patch',
    'secret',
    name,
    '-n',
    ns,
    '--type=merge',
    '-p',
    JSON.stringify({ data }),
  ]);
  expect(result.exitCode).toBe(0);
}

async function bootstrapped(prefix: string): Promise<{ ns: string; state: Snapshot }> {
  const ns = await createTestNamespace(prefix);
  expect((await renew(ns, { now: t0 })).exitCode).toBe(0);
  return { ns, state: await readSecrets(ns) };
}

const foreign = await foreignCertificate();

describe('haptic certificates renew: repairs', () => {
  it('recreates a deleted identity Secret under the stored CA and touches nothing else', async () => {
    const { ns, state } = await bootstrapped('certs-deleted');
    expect((await kubectl(['delete', 'secret', names.server, '-n', ns])).exitCode).toBe(0);
    const run = await renew(ns, { now: after(1) });
    expect(run.logs.find((line) => line.event === 'decision')?.reason).toBe('IdentityMissing');
    expect(written(run)).toEqual([`${ns}/${names.server}`]);
    const repaired = await readSecrets(ns);
    expect(versions(repaired).issuer).toBe(versions(state).issuer);
    expect(versions(repaired).client).toBe(versions(state).client);
    expect(generation(repaired)).toBe(1);
    expect(fingerprint(repaired.server, 'ca.crt')).toBe(fingerprint(state.issuer, 'tls.crt'));
    expect(await peersAuthenticate(repaired, after(1))).toEqual({ server: 'OK', client: 'OK' });
  });

  for (const [what, reason, data] of [
    ['a foreign ca.crt', 'IdentityTrustMismatch', { 'ca.crt': b64(foreign.cert) }],
    [
      'a foreign certificate and key',
      'IdentityIssuerMismatch',
      { 'tls.crt': b64(foreign.cert), 'tls.key': b64(foreign.key) },
    ],
    ['a certificate without its key', 'IdentityKeyMismatch', { 'tls.crt': b64(foreign.cert) }],
    ['an unreadable key', 'IdentityUnparsable', { 'tls.key': b64('not a key') }],
  ] as const) {
    it(`restores an identity patched with ${what} (${reason})`, async () => {
      const { ns, state } = await bootstrapped('certs-patched');
      await kubectl(['annotate', 'secret', names.server, '-n', ns, 'backup.example/policy=daily']);
      await patchData(ns, names.server, data);
      const run = await renew(ns, { now: after(1) });
      expect(run.exitCode).toBe(0);
      expect(run.logs.find((line) => line.event === 'decision')?.reason).toBe(reason);
      expect(written(run)).toEqual([`${ns}/${names.server}`]);
      const restored = await readSecrets(ns);
      expect(versions(restored).issuer).toBe(versions(state).issuer);
      expect(fingerprint(restored.server, 'ca.crt')).toBe(fingerprint(state.issuer, 'tls.crt'));
      expect(restored.server?.metadata?.annotations).toEqual({ 'backup.example/policy': 'daily' });
      expect(await peersAuthenticate(restored, after(1))).toEqual({ server: 'OK', client: 'OK' });
    });
  }

  it('removes previous-CA trust added outside a rotation, keeping the identity', async () => {
    const { ns, state } = await bootstrapped('certs-stale');
    const foreignCa = await foreignCertificate();
    await patchData(ns, names.client, {
      'previous-ca.crt': b64(foreignCa.cert),
      'previous-ca-until': b64('2030-01-01T12:00:00Z'),
    });
    const run = await renew(ns, { now: after(1) });
    expect(actions(run)).toEqual(['cleanup-previous-ca', 'none']);
    const cleaned = await readSecrets(ns);
    expect(text(cleaned.client, 'previous-ca.crt')).toBeUndefined();
    expect(text(cleaned.client, 'tls.key')).toBe(text(state.client, 'tls.key'));
  });
});

describe('haptic certificates renew: refusals', () => {
  it('refuses to replace identities when the issuer Secret is missing, and resumes once its backup is restored', async () => {
    const { ns, state } = await bootstrapped('certs-no-issuer');
    const backup = await kubectl(['get', 'secret', names.issuer, '-n', ns, '-o', 'json']);
    expect((await kubectl(['delete', 'secret', names.issuer, '-n', ns])).exitCode).toBe(0);

    const run = await renew(ns, { now: after(1) });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toBe(
      `haptic: The issuer Secret ${ns}/${names.issuer} is missing while the identity Secret ${ns}/${names.server} and ${ns}/${names.client} exists. ` +
        'Restore the issuer Secret from its backup; the Job will not replace existing identities with an unrelated CA.',
    );
    expect(summary(run)?.requests).toEqual({ GET: 3 });
    expect(run.logs.find((line) => line.event === 'decision')?.reason).toBe('IssuerMissing');
    const after1 = await readSecrets(ns);
    expect(versions(after1).server).toBe(versions(state).server);
    expect(versions(after1).client).toBe(versions(state).client);

    const restored = JSON.parse(backup.stdout) as { metadata: Record<string, unknown> };
    for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'managedFields']) {
      restored.metadata[field] = undefined;
    }
    expect((await kubectl(['create', '-f', '-'], JSON.stringify(restored))).exitCode).toBe(0);
    const resumed = await renew(ns, { now: after(1) });
    expect(resumed.exitCode).toBe(0);
    expect(written(resumed)).toEqual([]);
  });

  for (const [what, data] of [
    ['an unreadable key', { 'tls.key': b64('garbage') }],
    ['a malformed generation', { generation: b64('two') }],
    ['a certificate of another CA key', { 'tls.crt': '' }],
  ] as const) {
    it(`refuses a corrupt issuer Secret with ${what}`, async () => {
      const { ns, state } = await bootstrapped('certs-corrupt');
      const patch =
        what === 'a certificate of another CA key'
          ? { 'tls.crt': b64((await foreignCertificate()).cert) }
          : data;
      await patchData(ns, names.issuer, patch);
      const corrupted = versions(await readSecrets(ns));
      const run = await renew(ns, { now: after(1) });
      expect(run.exitCode).toBe(1);
      expect(run.stderr.split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(
        /^haptic: The .*issuer Secret .* Restore the issuer Secret from its backup; the Job will not replace existing identities with an unrelated CA\.$/,
      );
      expect(versions(await readSecrets(ns))).toEqual(corrupted);
      expect(versions(state).server).toBe(corrupted.server);
    });
  }

  const certManagerAnnotations = {
    'cert-manager.io/certificate-name': 'haptic-agent',
    'cert-manager.io/issuer-name': 'organisation',
  };
  for (const [owner, target, metadata, expected] of [
    [
      'cert-manager',
      names.server,
      { annotations: certManagerAnnotations },
      '(annotation cert-manager.io/certificate-name, annotation cert-manager.io/issuer-name);',
    ],
    [
      'an external owner',
      names.client,
      {},
      '(no label haptic.haproxy.org/certificate-provider=default);',
    ],
  ] as const) {
    it(`refuses to write a Secret owned by ${owner}, creating nothing`, async () => {
      const ns = await createTestNamespace('certs-foreign');
      const { cert, key } = await foreignCertificate();
      const secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: target, namespace: ns, ...metadata },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': b64(cert), 'tls.key': b64(key), 'ca.crt': b64(cert) },
      };
      expect((await kubectl(['create', '-f', '-'], JSON.stringify(secret))).exitCode).toBe(0);
      const before = versions(await readSecrets(ns));
      const run = await renew(ns, { now: t0 });
      expect(run.exitCode).toBe(1);
      expect(run.stderr.split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(`haptic: Secret ${ns}/${target}`);
      expect(run.stderr).toContain(`belongs to ${owner}`);
      expect(run.stderr).toContain(expected);
      expect(run.stderr).toContain(
        "the default provider never writes into another provider's Secret.",
      );
      expect(run.logs.find((line) => line.event === 'decision')?.reason).toBe(
        'SecretOwnedByOtherProvider',
      );
      expect(versions(await readSecrets(ns))).toEqual(before);
    });
  }

  it('refuses an identity Secret whose provider label was removed, and one that is not a TLS Secret', async () => {
    const { ns } = await bootstrapped('certs-unlabelled');
    await kubectl([
      'label',
      'secret',
      names.server,
      '-n',
      ns,
      'haptic.haproxy.org/certificate-provider-',
    ]);
    const unlabelled = await renew(ns, { now: after(1) });
    expect(unlabelled.exitCode).toBe(1);
    expect(unlabelled.stderr).toContain(
      'If it is a leftover of the default provider, add the label haptic.haproxy.org/certificate-provider=default',
    );

    await kubectl([
      'label',
      'secret',
      names.server,
      '-n',
      ns,
      'haptic.haproxy.org/certificate-provider=default',
    ]);
    expect(written(await renew(ns, { now: after(1) }))).toEqual([]);
    const data = (await readSecrets(ns)).client?.data ?? {};
    await kubectl(['delete', 'secret', names.client, '-n', ns]);
    const opaque = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: names.client,
        namespace: ns,
        labels: { 'haptic.haproxy.org/certificate-provider': 'default' },
      },
      type: 'Opaque',
      data,
    };
    await kubectl(['create', '-f', '-'], JSON.stringify(opaque));
    const wrongType = await renew(ns, { now: after(1) });
    expect(wrongType.exitCode).toBe(1);
    expect(wrongType.stderr).toContain('has type Opaque, not kubernetes.io/tls');
  });
});
