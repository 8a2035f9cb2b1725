/**
 * Client-certificate authentication of the webhook's callers (controller.webhook.clientAuth),
 * over real HTTPS: with a client CA mounted, a caller without a certificate from it is refused
 * in the TLS handshake (no HTTP request reaches the webhook), a caller with one is reviewed,
 * and a new CA projected into the directory replaces the old one without a restart.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:https';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../../dev/lib/atomic-writer.ts';
import { encodeCertificateChain, encodePrivateKey, issueLeaf } from '../../../src/pki/index.ts';
import { errorCodes } from '../../../src/errors.ts';
import { startWebhook, watchServingCertificate } from '../../../src/webhook/index.ts';
import { admissionReview } from '../../support/unauthenticated-review.ts';
import { type TestCa, makeCa } from '../../unit/validation/material.ts';
import { servingMaterial } from './registered-webhook.ts';

const logger = pino({ level: 'silent' });

const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

/** A client certificate (clientAuth) that `ca` signed, as PEM. */
async function clientIdentity(ca: TestCa, name: string) {
  const leaf = await issueLeaf({
    role: 'controller',
    dnsName: name,
    issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
    validityDays: 1,
    now: new Date(),
  });
  return {
    cert: encodeCertificateChain([leaf.certificate]),
    key: encodePrivateKey(leaf.keys.privateKey),
  };
}

const caFile = (ca: TestCa) => ({
  'ca.crt': Buffer.from(encodeCertificateChain([ca.certificate])),
});

type Outcome =
  | { readonly reviewed: true; readonly uid: string; readonly allowed: boolean }
  | { readonly reviewed: false; readonly alert: number | undefined; readonly error: string };

/** The TLS alert OpenSSL reports having received (`SSL alert number 48`), if any. */
function alertOf(message: string): number | undefined {
  const match = /SSL alert number (\d+)/.exec(message);
  return match === null ? undefined : Number(match[1]);
}

/**
 * POSTs an AdmissionReview of a ConfigMap (which no route reviews) over HTTPS. `maxVersion`
 * TLS 1.2 makes a refusal show as the server's alert every time: in TLS 1.3 the client's
 * handshake ends before the server judges its certificate, so the alert can race the request
 * and show as a reset instead.
 */
function review(
  port: number,
  caPem: string,
  identity?: { readonly cert: string; readonly key: string },
  maxVersion: 'TLSv1.2' | 'TLSv1.3' = 'TLSv1.3',
): Promise<Outcome> {
  const uid = `uid-${Math.random().toString(16).slice(2)}`;
  const body = admissionReview(uid, { group: '', version: 'v1', kind: 'ConfigMap' }, 'configmaps', {
    metadata: { name: 'probe', namespace: 'default' },
  });
  return new Promise((resolve) => {
    const call = request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate',
        method: 'POST',
        ca: caPem,
        ...identity,
        maxVersion,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: 10_000,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const answer = (JSON.parse(text) as { response: { uid: string; allowed: boolean } })
            .response;
          resolve({ reviewed: true, uid: answer.uid, allowed: answer.allowed });
        });
      },
    );
    call.on('error', (error: NodeJS.ErrnoException) => {
      resolve({ reviewed: false, alert: alertOf(error.message), error: error.message });
    });
    call.end(body);
  });
}

describe('webhook client-certificate authentication', () => {
  it('refuses callers without a certificate from the client CA in the handshake and reviews the rest', async () => {
    const serving = await servingMaterial();
    const root = mkdtempSync(join(tmpdir(), 'webhook-client-auth-'));
    const servingDir = join(root, 'webhook-tls');
    const clientCaDir = join(root, 'webhook-client-ca');
    await writeAtomicProjection(servingDir, {
      'tls.crt': Buffer.from(serving.certPem),
      'tls.key': Buffer.from(serving.keyPem),
    });
    const apiServerCa = await makeCa('apiserver-webhook-client-ca', { at: new Date() });
    await writeAtomicProjection(clientCaDir, caFile(apiServerCa));
    const certificates = await watchServingCertificate({
      dir: servingDir,
      clientCaDir,
      logger,
      pollIntervalMs: 200,
    });
    cleanup.push(() => {
      certificates.close();
    });
    const seen: string[] = [];
    const server = await startWebhook(
      {
        onReview: (event) => seen.push(event.uid),
        onHttpError: (status) => seen.push(`http ${status}`),
      },
      { host: '127.0.0.1', port: 0, certificates },
    );
    cleanup.push(() => server.close());

    const apiServer = await clientIdentity(apiServerCa, 'kube-apiserver-webhook-client');
    const other = await clientIdentity(await makeCa('other-ca', { at: new Date() }), 'tenant');

    // Nobody's certificate, and a certificate of another CA: refused in the handshake, so no
    // request reaches the webhook.
    // Without a certificate OpenSSL sends alert 40 (handshake_failure); a certificate that does
    // not verify makes Node close the connection before the handshake ends.
    expect(await review(server.port, serving.caPem, undefined, 'TLSv1.2')).toMatchObject({
      reviewed: false,
      alert: 40,
    });
    expect(await review(server.port, serving.caPem, other, 'TLSv1.2')).toEqual({
      reviewed: false,
      alert: undefined,
      error: 'Client network socket disconnected before secure TLS connection was established',
    });
    expect(await review(server.port, serving.caPem)).toMatchObject({ reviewed: false });
    expect(await review(server.port, serving.caPem, other)).toMatchObject({ reviewed: false });
    expect(seen).toEqual([]);

    // The API server's certificate: reviewed (a ConfigMap no route claims is allowed).
    const answer = await review(server.port, serving.caPem, apiServer);
    expect(answer).toMatchObject({ reviewed: true, allowed: true });
    expect(seen).toEqual([answer.reviewed ? answer.uid : '']);

    // A new client CA replaces the old one in place.
    const nextCa = await makeCa('apiserver-webhook-client-ca-2', { at: new Date() });
    await writeAtomicProjection(clientCaDir, caFile(nextCa));
    await expect
      .poll(async () => (await review(server.port, serving.caPem, apiServer)).reviewed, {
        timeout: 5000,
      })
      .toBe(false);
    const next = await clientIdentity(nextCa, 'kube-apiserver-webhook-client');
    expect(await review(server.port, serving.caPem, next)).toMatchObject({
      reviewed: true,
      allowed: true,
    });
  });

  it.each([
    ['without ca.crt', {}, 'ca.crt is missing.'],
    [
      'whose ca.crt holds a leaf',
      'leaf',
      'certificate 1 of ca.crt is not a CA (basicConstraints cA is not set).',
    ],
    ['whose ca.crt is not PEM', { 'ca.crt': Buffer.from('not a certificate') }, 'ca.crt'],
  ] as const)('fails fast at start-up with a client CA directory %s', async (_, files, problem) => {
    const serving = await servingMaterial();
    const root = mkdtempSync(join(tmpdir(), 'webhook-client-ca-bad-'));
    const servingDir = join(root, 'webhook-tls');
    const clientCaDir = join(root, 'webhook-client-ca');
    await writeAtomicProjection(servingDir, {
      'tls.crt': Buffer.from(serving.certPem),
      'tls.key': Buffer.from(serving.keyPem),
    });
    await writeAtomicProjection(
      clientCaDir,
      files === 'leaf' ? { 'ca.crt': Buffer.from(serving.certPem) } : files,
    );
    const failure = watchServingCertificate({ dir: servingDir, clientCaDir, logger });
    await expect(failure).rejects.toMatchObject({ code: errorCodes.WEBHOOK_CERTIFICATE_INVALID });
    await expect(failure).rejects.toThrow(
      `The webhook's client CA in ${clientCaDir} is unusable: `,
    );
    await expect(failure).rejects.toThrow(problem);
    await expect(failure).rejects.toThrow(
      "Mount a Secret whose ca.crt holds the CA that signs the API server's webhook client certificate (controller.webhook.clientAuth.caSecretName).",
    );
  });
});
