import { connect } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
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

  it.each([
    ['a uid that is not a string', { uid: 7 }, 'request.uid must be a string.'],
    [
      'a name over 512 characters',
      { name: 'n'.repeat(513) },
      'request.name is longer than 512 characters.',
    ],
    [
      'a kind that is not an object',
      { kind: 'Secret' },
      'request.kind must be an object (group, version, kind).',
    ],
    [
      'a kind name that is not a string',
      { kind: { group: '', kind: ['Secret'] } },
      'request.kind.kind must be a string.',
    ],
    [
      'an object that is not an object',
      { object: 'Secret' },
      'request.object and request.oldObject must be JSON objects or null.',
    ],
    [
      'an old object that is an array',
      { oldObject: [] },
      'request.object and request.oldObject must be JSON objects or null.',
    ],
    ['a dryRun that is not a boolean', { dryRun: 'yes' }, 'request.dryRun must be a boolean.'],
    [
      'userInfo that is not an object',
      { userInfo: 'alice' },
      'request.userInfo must be an object.',
    ],
  ])(
    'answers 400 to a review with %s, before any validator sees it',
    async (_, change, problem) => {
      const before = seen.length;
      const body = review();
      body.request = { ...(body.request as object), ...change };
      const res = await request(app).post('/validate').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: `The AdmissionReview is malformed: ${problem}` });
      expect(seen.length).toBe(before);
    },
  );

  it('answers 400 to an unknown operation, naming the ones it knows', async () => {
    const body = review();
    body.request = { ...(body.request as object), operation: 'PATCH' };
    const res = await request(app).post('/validate').send(body);
    expect(res.body).toEqual({
      message:
        'The AdmissionReview request has an unknown operation "PATCH": expected CREATE, UPDATE, DELETE or CONNECT.',
    });
  });

  it('answers 415 to a compressed body instead of inflating it', async () => {
    const res = await request(app)
      .post('/validate')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send(gzipSync(JSON.stringify(review())));
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ message: 'The body uses an unsupported content encoding.' });
  });

  it.each([
    [
      'a declared length over the limit',
      `Content-Length: ${String(100 * 1024 * 1024)}`,
      /^HTTP\/1\.1 413 [^]*larger than this webhook accepts/,
    ],
    [
      'a body without a declared length',
      'Transfer-Encoding: chunked',
      /^HTTP\/1\.1 411 [^]*Send the AdmissionReview with a Content-Length header\./,
    ],
  ])('answers %s at once, without reading the body', async (_, header, expected) => {
    // Headers only: a webhook that waited for the body it was promised would never answer.
    const answer = await rawExchange(
      'POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `${header}\r\n\r\n`,
    );
    expect(answer).toMatch(expected);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
  });
});

/** Sends `head` on a new connection and returns what comes back until the server closes it. */
async function rawExchange(head: string): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(head));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
      });
      socket.on('end', () => {
        resolve(text);
      });
      socket.on('error', reject);
      setTimeout(() => {
        socket.destroy();
        reject(new Error(`the server kept the connection open: ${text}`));
      }, 2000);
    });
  } finally {
    server.close();
  }
}

describe('webhook HTTP layer under a flood', () => {
  /** An app whose reviews wait until `release()`; listening on loopback. */
  async function heldApp(inFlight: { requests: number; bytes: number }) {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const started: string[] = [];
    const app = createWebhookApp({
      maxBodyBytes: 4096,
      inFlight,
      review: async (req) => {
        started.push(req.uid);
        await held;
        return { uid: req.uid, allowed: true };
      },
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const post = (uid: string, padding = 0) => {
      const body = { ...review(uid), padding: 'x'.repeat(padding) };
      return fetch(`http://127.0.0.1:${String(port)}/validate`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    };
    return { started, release, post, port, close: () => server.close() };
  }

  /** A connection that sent `count` reviews at once, pipelined, without waiting for answers. */
  async function pipelined(port: number, count: number): Promise<Socket> {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = JSON.stringify(review('pipelined'));
    const one = `POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${String(Buffer.byteLength(body))}\r\n\r\n${body}`;
    socket.write(one.repeat(count));
    return socket;
  }

  async function until(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !condition(); i += 1) await new Promise((r) => setTimeout(r, 5));
    expect(condition()).toBe(true);
  }

  it('answers 429 at once to a request beyond the number in flight, then serves again', async () => {
    const held = await heldApp({ requests: 2, bytes: 1024 * 1024 });
    try {
      const first = held.post('a');
      const second = held.post('b');
      await until(() => held.started.length === 2);
      const refused = await held.post('c');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toEqual({
        message:
          'The webhook holds as many reviews as it may (2 requests, 1048576 bytes of bodies); retry in a moment. If this lasts, something is flooding the webhook: restrict who may reach it (NetworkPolicy, controller.networkPolicy.enabled).',
      });
      expect(held.started).toEqual(['a', 'b']);
      held.release();
      expect([(await first).status, (await second).status]).toEqual([200, 200]);
      const after = await held.post('d');
      expect(after.status).toBe(200);
      expect(await after.json()).toMatchObject({ response: { uid: 'd' } });
    } finally {
      held.close();
    }
  });

  it('weighs requests by their declared length, a lone one always fitting', async () => {
    const held = await heldApp({ requests: 10, bytes: 3000 });
    try {
      // Larger than the whole budget, but alone: taken.
      const large = held.post('large', 3200);
      await until(() => held.started.length === 1);
      expect((await held.post('small')).status).toBe(429);
      held.release();
      expect((await large).status).toBe(200);
      const [one, two] = await Promise.all([held.post('one', 1000), held.post('two', 1000)]);
      expect([one.status, two.status]).toEqual([200, 200]);
    } finally {
      held.close();
    }
  });

  it('holds many pipelined requests of one connection without a listener warning', async () => {
    const held = await heldApp({ requests: 20, bytes: 1024 * 1024 });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', onWarning);
    try {
      const socket = await pipelined(held.port, 15);
      await until(() => held.started.length === 15);
      socket.destroy();
      held.release();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      held.close();
    }
  });

  it('gives back the room of pipelined requests whose connection closed before their answers', async () => {
    const held = await heldApp({ requests: 3, bytes: 1024 * 1024 });
    try {
      const socket = await pipelined(held.port, 3);
      await until(() => held.started.length >= 1);
      socket.destroy();
      held.release();
      // All three were taken (the budget's three requests); each gave its room back.
      const after = await Promise.all([held.post('x'), held.post('y'), held.post('z')]);
      expect(after.map((res) => res.status)).toEqual([200, 200, 200]);
    } finally {
      held.close();
    }
  });

  it('gives back the room of a sender that stopped mid-body', async () => {
    const held = await heldApp({ requests: 1, bytes: 1024 * 1024 });
    try {
      const socket = connect(held.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        'POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3000\r\n\r\n{"apiVersion":',
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await held.post('while-held')).status).toBe(429);
      socket.destroy();
      held.release();
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i += 1) {
        status = (await held.post(`after-${String(i)}`)).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(status).toBe(200);
    } finally {
      held.close();
    }
  });
});
