/**
 * `haptic preflight` against Secrets in the real API server: the credential Secret, an external
 * webhook serving certificate, the default frontend certificate and external identities whose
 * tls.crt carries an intermediate CA after the leaf (the spec: "Each certificate file includes
 * any intermediate certificates after its leaf certificate").
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CryptoKeyPair,
  crossSignCa,
  encodePrivateKey,
  issueLeaf,
  Certificate,
} from '../../../src/pki/index.ts';
import { peculiarX509 } from '../../../src/pki/peculiar-loader.ts';
import { readPackageVersion } from '../../../src/version.ts';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { type TestCa, b64, makeCa, makeLeaf, pem } from '../../unit/validation/material.ts';
import { preflight, valuesFile } from './run-preflight.ts';

const version = readPackageVersion();
const hourMs = 3_600_000;

interface Finding {
  readonly severity: string;
  readonly code: string;
  readonly path: string;
  readonly message: string;
}

async function applySecret(
  ns: string,
  name: string,
  data: Record<string, string>,
  type = 'kubernetes.io/tls',
): Promise<void> {
  const body = { apiVersion: 'v1', kind: 'Secret', type, metadata: { name, namespace: ns }, data };
  const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(body));
  // The API server only warns when tls.key does not belong to tls.crt; preflight must reject.
  expect(applied.stderr.replace(/^Warning: tls: private key does not match public key$/m, '')).toBe(
    '',
  );
  expect(applied.exitCode).toBe(0);
}

/** Runs preflight with these values in `ns` and returns its exit code and JSON findings. */
async function check(
  ns: string,
  values: unknown,
): Promise<{ exitCode: number; findings: Finding[]; stderr: string }> {
  const result = await preflight([
    '-n',
    ns,
    '-f',
    valuesFile(values),
    '--expect-chart-version',
    version,
    '--output',
    'json',
  ]);
  const report = JSON.parse(result.stdout) as { findings: Finding[] };
  return { exitCode: result.exitCode, findings: report.findings, stderr: result.stderr };
}

function keyPair(
  chain: readonly Certificate[],
  keys: CryptoKeyPair,
  ca?: Certificate,
): Record<string, string> {
  return {
    'tls.crt': b64(pem(...chain)),
    'tls.key': b64(encodePrivateKey(keys.privateKey)),
    ...(ca === undefined ? {} : { 'ca.crt': b64(pem(ca)) }),
  };
}

/** A serving certificate for `dnsName` (serverAuth) under `ca`. */
async function serving(dnsName: string, ca: TestCa) {
  return makeLeaf('agent', dnsName, ca, { at: new Date() });
}

/** An intermediate CA certified by `root` (its own self-signed form supplies subject and key). */
async function intermediateOf(root: TestCa, name: string): Promise<TestCa> {
  const own = await makeCa(name, { at: new Date() });
  const certificate = await crossSignCa({
    certificate: own.certificate,
    issuer: { certificate: root.certificate, privateKey: root.keys.privateKey },
    notBefore: new Date(Date.now() - hourMs),
    notAfter: new Date(Date.now() + 300 * 24 * hourMs),
  });
  return { certificate, keys: own.keys };
}

/** A certificate for `name` signed by `root` that is not a CA (basicConstraints CA:FALSE). */
async function nonCaOf(root: TestCa, name: string): Promise<TestCa> {
  const own = await makeCa(name, { at: new Date() });
  const x509 = peculiarX509();
  const signed = await x509.X509CertificateGenerator.create({
    serialNumber: '7a11',
    subject: own.certificate.subject,
    issuer: root.certificate.subject,
    notBefore: new Date(Date.now() - hourMs),
    notAfter: new Date(Date.now() + 300 * 24 * hourMs),
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    publicKey: own.keys.publicKey,
    signingKey: root.keys.privateKey,
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
  });
  return { certificate: Certificate.fromDer(new Uint8Array(signed.rawData)), keys: own.keys };
}

describe('preflight against live Secrets in the real API server', () => {
  let root: TestCa;
  let otherRoot: TestCa;

  beforeAll(async () => {
    root = await makeCa('issuer-root', { at: new Date() });
    otherRoot = await makeCa('other-root', { at: new Date() });
  });

  it('rejects a missing or incomplete credentials.existingSecret, and accepts a complete one', async () => {
    const ns = await createTestNamespace('pf-creds');
    const values = { credentials: { existingSecret: 'creds' } };
    const absent = await check(ns, values);
    expect(absent.exitCode).toBe(1);
    expect(absent.findings).toEqual([
      {
        severity: 'error',
        code: 'CredentialsSecretMissing',
        path: 'credentials.existingSecret',
        message: `credentials.existingSecret names Secret ${ns}/creds, which does not exist: create it with the keys dataplane_username and dataplane_password, or correct the name.`,
      },
    ]);
    // The rejection says how to retry (a rejected first install leaves a failed release).
    expect(absent.stderr).toContain(`helm upgrade --install haptic <chart> -n ${ns}`);

    await applySecret(ns, 'creds', { dataplane_username: b64('admin') }, 'Opaque');
    const partial = await check(ns, values);
    expect(partial.exitCode).toBe(1);
    expect(partial.findings.map((f) => [f.code, f.path, f.message])).toEqual([
      [
        'CredentialsSecretIncomplete',
        'secret/creds/dataplane_password',
        `Secret ${ns}/creds (credentials.existingSecret) has no dataplane_password: it must provide dataplane_username and dataplane_password.`,
      ],
    ]);

    // An empty value counts as absent.
    await applySecret(
      ns,
      'creds',
      { dataplane_username: b64('admin'), dataplane_password: '' },
      'Opaque',
    );
    expect((await check(ns, values)).findings.map((f) => f.path)).toEqual([
      'secret/creds/dataplane_password',
    ]);

    await applySecret(
      ns,
      'creds',
      { dataplane_username: b64('admin'), dataplane_password: b64('s3cret') },
      'Opaque',
    );
    const complete = await check(ns, values);
    expect(complete.findings).toEqual([]);
    expect(complete.exitCode).toBe(0);
  });

  it('checks the external webhook certificate against caBundle and haptic-webhook.<ns>.svc', async () => {
    const ns = await createTestNamespace('pf-webhook');
    const dnsName = `haptic-webhook.${ns}.svc`;
    const values = (bundle: TestCa) => ({
      controller: {
        webhook: { secretName: 'hook', caBundle: b64(pem(bundle.certificate)) },
      },
    });
    const good = await serving(dnsName, root);

    // Issued by another CA than caBundle's, and its own ca.crt does not help.
    const foreign = await serving(dnsName, otherRoot);
    await applySecret(ns, 'hook', keyPair([foreign.certificate], foreign.keys));
    const untrusted = await check(ns, values(root));
    expect(untrusted.exitCode).toBe(1);
    expect(untrusted.findings).toEqual([
      {
        severity: 'error',
        code: 'WebhookCertificateInvalid',
        path: 'secret/hook/tls.crt',
        message: `The webhook certificate in Secret ${ns}/hook (issuer CN=other-root) is not signed by a CA in controller.webhook.caBundle: reissue it from the CA in caBundle, or set caBundle to the base64 PEM of the CA that issued it.`,
      },
    ]);

    // The certificate is right (its Secret's ca.crt verifies it); caBundle is the wrong value.
    await applySecret(ns, 'hook', keyPair([good.certificate], good.keys, root.certificate));
    const wrongBundle = await check(ns, values(otherRoot));
    expect(wrongBundle.findings).toEqual([
      {
        severity: 'error',
        code: 'WebhookCaBundleMismatch',
        path: 'controller.webhook.caBundle',
        message: `controller.webhook.caBundle does not hold the CA that issued the webhook certificate in Secret ${ns}/hook (issuer CN=issuer-root), so the API server would refuse the webhook's TLS. Set controller.webhook.caBundle to that Secret's ca.crt as base64: kubectl get secret hook -n ${ns} -o jsonpath='{.data.ca\\.crt}'.`,
      },
    ]);
    // The command the message gives prints exactly the value that fixes it.
    const fixed = await kubectl([
      'get',
      'secret',
      'hook',
      '-n',
      ns,
      '-o',
      'jsonpath={.data.ca\\.crt}',
    ]);
    expect(fixed.stdout).toBe(b64(pem(root.certificate)));

    // Without the Service's DNS name.
    const unnamed = await serving(`haptic-webhook.${ns}`, root);
    await applySecret(ns, 'hook', keyPair([unnamed.certificate], unnamed.keys));
    expect((await check(ns, values(root))).findings).toEqual([
      {
        severity: 'error',
        code: 'WebhookCertificateInvalid',
        path: 'secret/hook/tls.crt',
        message: `The webhook certificate in Secret ${ns}/hook cannot serve ${dnsName} under controller.webhook.caBundle: The certificate CN=haptic-webhook.${ns} has DNS names haptic-webhook.${ns}, not ${dnsName}; reissue it with the DNS SAN ${dnsName}. Update the Secret, or caBundle, so they match.`,
      },
    ]);

    // A key of another certificate.
    await applySecret(ns, 'hook', keyPair([good.certificate], foreign.keys));
    expect((await check(ns, values(root))).findings).toEqual([
      {
        severity: 'error',
        code: 'KeyMismatch',
        path: 'secret/hook/tls.key',
        message: `tls.key of Secret ${ns}/hook does not belong to the webhook certificate in tls.crt: update tls.crt and tls.key together, from the same issuance.`,
      },
    ]);

    // Served through an intermediate CA sent after the leaf.
    const intermediate = await intermediateOf(root, 'webhook-intermediate');
    const chained = await serving(dnsName, intermediate);
    await applySecret(
      ns,
      'hook',
      keyPair([chained.certificate, intermediate.certificate], chained.keys),
    );
    const accepted = await check(ns, values(root));
    expect(accepted.findings).toEqual([]);
    expect(accepted.exitCode).toBe(0);
  });

  it('rejects a default frontend certificate whose key does not match, naming tls.key', async () => {
    const ns = await createTestNamespace('pf-frontend');
    const values = { defaultSSLCertificate: { secretName: 'frontend' } };
    const site = await serving('www.example.test', root);
    const other = await serving('other.example.test', root);
    await applySecret(ns, 'frontend', keyPair([site.certificate], other.keys));
    const rejected = await check(ns, values);
    expect(rejected.exitCode).toBe(1);
    expect(rejected.findings).toEqual([
      {
        severity: 'error',
        code: 'KeyMismatch',
        path: 'secret/frontend/tls.key',
        message: `tls.key of Secret ${ns}/frontend does not belong to the default frontend certificate in tls.crt: update tls.crt and tls.key together, from the same issuance.`,
      },
    ]);
    await applySecret(ns, 'frontend', keyPair([site.certificate], site.keys));
    const accepted = await check(ns, values);
    expect(accepted.findings).toEqual([]);
    expect(accepted.exitCode).toBe(0);
  });

  describe('external identities whose tls.crt carries an intermediate CA after the leaf', () => {
    const names = {
      agent: 'agent.example.internal',
      controller: 'controller.example.internal',
    };
    const values = {
      haproxy: {
        agent: {
          tls: {
            managed: false,
            serverSecretName: 'agent-identity',
            clientSecretName: 'controller-identity',
            serverName: names.agent,
            clientName: names.controller,
          },
        },
      },
    };

    /** Both identity Secrets: leaves under `issuing`, tls.crt = leaf + `sent`, ca.crt = root. */
    async function identities(ns: string, issuing: TestCa, sent: readonly Certificate[]) {
      const at = new Date();
      for (const [role, name, secret] of [
        ['agent', names.agent, 'agent-identity'],
        ['controller', names.controller, 'controller-identity'],
      ] as const) {
        const leaf = await issueLeaf({
          role,
          dnsName: name,
          issuer: { certificate: issuing.certificate, privateKey: issuing.keys.privateKey },
          validityDays: 30,
          now: at,
        });
        await applySecret(
          ns,
          secret,
          keyPair([leaf.certificate, ...sent], leaf.keys, root.certificate),
        );
      }
    }

    it('accepts a valid intermediate', async () => {
      const ns = await createTestNamespace('pf-chain-ok');
      const intermediate = await intermediateOf(root, 'agent-intermediate');
      await identities(ns, intermediate, [intermediate.certificate]);
      const result = await check(ns, values);
      expect(result.findings).toEqual([]);
      expect(result.exitCode).toBe(0);
    });

    it('rejects a leaf sent without its intermediate, naming the issuer to add', async () => {
      const ns = await createTestNamespace('pf-chain-missing');
      const intermediate = await intermediateOf(root, 'agent-intermediate');
      await identities(ns, intermediate, []);
      const result = await check(ns, values);
      expect(result.exitCode).toBe(1);
      expect(result.findings.map((f) => [f.code, f.path])).toEqual([
        ['IdentityUntrusted', 'secret/agent-identity/tls.crt'],
        ['IdentityUntrusted', 'secret/controller-identity/tls.crt'],
      ]);
      expect(result.findings[0]?.message).toContain('(issuer CN=agent-intermediate)');
    });

    it('rejects an intermediate that is not a CA, saying so', async () => {
      const ns = await createTestNamespace('pf-chain-notca');
      const notCa = await nonCaOf(root, 'not-a-ca');
      await identities(ns, notCa, [notCa.certificate]);
      const result = await check(ns, values);
      expect(result.exitCode).toBe(1);
      expect(result.findings.map((f) => [f.code, f.path])).toEqual([
        ['IdentityUntrusted', 'secret/agent-identity/tls.crt'],
        ['IdentityUntrusted', 'secret/controller-identity/tls.crt'],
      ]);
      expect(result.findings[0]?.message).toContain(
        'The intermediate CA CN=not-a-ca is not a CA allowed to sign certificates (basicConstraints CA:TRUE, keyCertSign).',
      );
    });

    it('rejects an intermediate certified by another root than ca.crt', async () => {
      const ns = await createTestNamespace('pf-chain-foreign');
      const foreign = await intermediateOf(otherRoot, 'foreign-intermediate');
      await identities(ns, foreign, [foreign.certificate]);
      const result = await check(ns, values);
      expect(result.exitCode).toBe(1);
      expect(result.findings.map((f) => f.code)).toEqual([
        'IdentityUntrusted',
        'IdentityUntrusted',
      ]);
      expect(result.findings[0]?.message).toContain('not signed by a trusted CA');
    });
  });
});
