import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { AdmissionRequest } from './admission-review.ts';
import { createWebhookApp } from './app.ts';

const seen: AdmissionRequest[] = [];
const app = createWebhookApp({
  maxBodyBytes: 4096,
  review: (req) => {
    seen.push(req);
    return Promise.resolve({ uid: req.uid, allowed: true });
  },
});

function review(uid = 'u-1'): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Secret' },
      name: 's',
      namespace: 'ns',
      operation: 'CREATE',
      userInfo: { username: 'alice' },
      object: { kind: 'Secret', metadata: { name: 's' } },
      dryRun: true,
    },
  };
}

describe('webhook HTTP layer', () => {
  it('answers an AdmissionReview with an AdmissionReview echoing the uid', async () => {
    const res = await request(app).post('/validate').send(review('abc'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'abc', allowed: true },
    });
    expect(seen.at(-1)).toMatchObject({
      uid: 'abc',
      operation: 'CREATE',
      username: 'alice',
      dryRun: true,
    });
  });

  it('answers 415 to another content type', async () => {
    const res = await request(app).post('/validate').set('Content-Type', 'text/plain').send('{}');
    expect(res.status).toBe(415);
    expect(res.body).toEqual({
      message: 'Send the AdmissionReview as Content-Type application/json.',
    });
  });

  it('answers 400 to malformed JSON', async () => {
    const res = await request(app)
      .post('/validate')
      .set('Content-Type', 'application/json')
      .send('{"apiVersion": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'The body is not valid JSON.' });
  });

  it('answers 400 to JSON that is not an AdmissionReview', async () => {
    const res = await request(app).post('/validate').send({ apiVersion: 'v1', kind: 'Secret' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'The body is not an admission.k8s.io/v1 AdmissionReview.',
    });
  });

  it('answers 400 to a review without uid', async () => {
    const body = review();
    body.request = { ...(body.request as object), uid: '' };
    const res = await request(app).post('/validate').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'The AdmissionReview request has no uid.' });
  });

  it('answers 413 to a body over the limit', async () => {
    const body = review();
    body.padding = 'x'.repeat(5000);
    const res = await request(app).post('/validate').send(body);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      message: 'The AdmissionReview is larger than this webhook accepts.',
    });
  });

  it('answers 404 elsewhere and serves /healthz', async () => {
    expect((await request(app).get('/validate')).status).toBe(404);
    expect((await request(app).get('/healthz')).text).toBe('ok\n');
  });
});
