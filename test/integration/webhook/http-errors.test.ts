/** The webhook over real TLS: malformed, oversized and mistyped requests get 4xx, never a crash. */
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type WebhookServer,
  defaultMaxBodyBytes,
  fixedCertificateSource,
  startWebhook,
} from '../../../src/webhook/index.ts';
import { type ServingMaterial, servingMaterial } from './registered-webhook.ts';

let server: WebhookServer | undefined;
let material: ServingMaterial;

beforeAll(async () => {
  material = await servingMaterial();
  server = await startWebhook(
    {},
    {
      host: '127.0.0.1',
      port: 0,
      certificates: fixedCertificateSource({
        cert: Buffer.from(material.certPem),
        key: Buffer.from(material.keyPem),
      }),
    },
  );
});

afterAll(async () => {
  await server?.close();
});

function post(
  body: string | Buffer,
  contentType = 'application/json',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server?.port,
        path: '/validate',
        method: 'POST',
        ca: material.caPem,
        headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const review = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'abc-123',
    kind: { group: '', version: 'v1', kind: 'Secret' },
    name: 'x',
    namespace: 'y',
    operation: 'CREATE',
    object: { kind: 'Secret', metadata: { name: 'x' } },
  },
});

describe('webhook HTTP errors over TLS', () => {
  it('answers a well-formed review', async () => {
    const answer = await post(review);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'abc-123', allowed: true },
    });
  });

  it('answers 400 to malformed JSON', async () => {
    expect(await post('{"apiVersion":')).toEqual({
      status: 400,
      body: '{"message":"The body is not valid JSON."}',
    });
  });

  it('answers 400 to a review without request', async () => {
    const answer = await post(
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
    );
    expect(answer).toEqual({
      status: 400,
      body: '{"message":"The AdmissionReview has no request."}',
    });
  });

  it('answers 413 to an oversized review, and keeps serving', async () => {
    const huge = Buffer.alloc(defaultMaxBodyBytes + 1024, 0x20);
    expect((await post(huge)).status).toBe(413);
    expect((await post(review)).status).toBe(200);
  });

  it('answers 415 to another content type', async () => {
    expect((await post(review, 'application/yaml')).status).toBe(415);
  });
});
