/**
 * How `haptic preflight`'s live reads travel (createAccessLiveReader, multiplexed): over one
 * HTTP/2 connection to the real API server, and over HTTP/1.1 to a server without HTTP/2, with
 * the same answers and the same errors.
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { CoreV1Api } from '@kubernetes/client-node';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { HapticError, errorCodes } from '../../../src/errors.ts';
import { loadKubeAccess } from '../../../src/kube/kube-access.ts';
import { loadKubeConfig } from '../../../src/kube/kube-config.ts';
import {
  createAccessLiveReader,
  createKubeLiveReader,
} from '../../../src/webhook/kube-live-reader.ts';
import { readLiveState } from '../../../src/webhook/release-io.ts';
import {
  adminKubeConfig,
  createTestNamespace,
  serviceAccountKubeconfig,
  kubectl,
} from '../../support/cluster.ts';
import { type SelfSigned, selfSignedCertificate } from '../../support/self-signed.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';

const userAgent = 'haptic/test (preflight)';
const names = ['a', 'b', 'c', 'd', 'e', 'f'];

let tls: SelfSigned;
beforeAll(async () => {
  tls = await selfSignedCertificate('localhost');
});

/** A kubeconfig for a token user of the server on `port`, trusting the test certificate. */
function kubeconfigFor(port: number): string {
  const path = join(tls.dir, `kubeconfig-${String(port)}`);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: {
            server: `https://localhost:${String(port)}`,
            'certificate-authority-data': Buffer.from(tls.cert).toString('base64'),
          },
        },
      ],
      users: [{ name: 'u', user: { token: 'the-token' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return path;
}

/** A reader as preflight opens it, over the access the kubeconfig at `path` gives. */
function preflightReader(path: string): ReturnType<typeof createAccessLiveReader> {
  const access = loadKubeAccess(path);
  if (access === undefined) throw new Error(`${path} needs the full client`);
  return createAccessLiveReader(access, { userAgent, multiplexed: true });
}

/** What a fake API server saw of one request. */
interface Seen {
  readonly path: string;
  readonly authorization: string | undefined;
  readonly userAgent: string | undefined;
  readonly protocol: string;
}

/** Answers as the API server does: Secret `a` exists, everything else is 404. */
function answer(path: string): { status: number; body: string } {
  if (path.endsWith('/secrets/a')) {
    return {
      status: 200,
      body: JSON.stringify({
        metadata: { name: 'a', namespace: 'ns', labels: { l: 'v' } },
        data: { k: Buffer.from('v').toString('base64') },
      }),
    };
  }
  return { status: 404, body: JSON.stringify({ kind: 'Status', code: 404 }) };
}

async function listen(server: NetServer): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

const reads = {
  namespace: 'ns',
  secrets: names,
  metadataOnly: ['issuer'],
  deployments: { server: 'haproxy', client: 'controller' },
};

describe('preflight live reads over HTTP/2', () => {
  it('sends every read of a preflight over one connection, with the token and user agent', async () => {
    const seen: Seen[] = [];
    let sessions = 0;
    const server = createSecureServer({ key: tls.key, cert: tls.cert });
    server.on('session', () => {
      sessions += 1;
    });
    server.on('stream', (stream, headers) => {
      const path = String(headers[':path']);
      seen.push({
        path,
        authorization: headers.authorization,
        userAgent: headers['user-agent'],
        protocol: 'h2',
      });
      const { status, body } = answer(path);
      stream.respond({ ':status': status, 'content-type': 'application/json' });
      stream.end(body);
    });
    const port = await listen(server);
    try {
      const state = await readLiveState(preflightReader(kubeconfigFor(port)), reads);
      expect([...state.secrets.keys()]).toEqual(['a']);
      expect(state.secrets.get('a')?.data).toEqual({ k: Buffer.from('v').toString('base64') });
      expect(state.mounted).toEqual({});
      expect(sessions).toBe(1);
      expect(seen).toHaveLength(names.length + 3);
      expect(new Set(seen.map((request) => request.authorization))).toEqual(
        new Set(['Bearer the-token']),
      );
      expect(new Set(seen.map((request) => request.userAgent))).toEqual(new Set([userAgent]));
      expect(seen.map((request) => request.path).sort()).toEqual(
        [
          ...[...names, 'issuer'].map((name) => `/api/v1/namespaces/ns/secrets/${name}`),
          '/apis/apps/v1/namespaces/ns/deployments/haproxy',
          '/apis/apps/v1/namespaces/ns/deployments/controller',
        ].sort(),
      );
    } finally {
      server.close();
    }
  });

  it('keeps a command alive while its reads connect, with nothing else left to wait for', async () => {
    // A command whose other work has ended (helm exited, the render process a spare that does
    // not hold it open): only the reads remain, awaited at the top level of its module.
    const server = createSecureServer({ key: tls.key, cert: tls.cert });
    server.on('stream', (stream, headers) => {
      const { status, body } = answer(String(headers[':path']));
      stream.respond({ ':status': status, 'content-type': 'application/json' });
      stream.end(body);
    });
    const port = await listen(server);
    const script = join(tls.dir, 'reads-alone.ts');
    writeFileSync(
      script,
      [
        `import { loadKubeAccess } from ${JSON.stringify(join(projectRoot, 'src/kube/kube-access.ts'))};`,
        `import { createAccessLiveReader } from ${JSON.stringify(join(projectRoot, 'src/webhook/kube-live-reader.ts'))};`,
        `import { readLiveState } from ${JSON.stringify(join(projectRoot, 'src/webhook/release-io.ts'))};`,
        `const access = loadKubeAccess(${JSON.stringify(kubeconfigFor(port))});`,
        `const reader = createAccessLiveReader(access, { userAgent: 'test', multiplexed: true });`,
        `const state = await readLiveState(reader, ${JSON.stringify(reads)});`,
        `process.stdout.write(JSON.stringify([...state.secrets.keys()]));`,
      ].join('\n'),
    );
    try {
      const run = await execa(process.execPath, [script], { reject: false });
      expect(run.stderr).not.toContain('unsettled top-level await');
      expect({ exitCode: run.exitCode, stdout: run.stdout }).toEqual({
        exitCode: 0,
        stdout: JSON.stringify(['a']),
      });
    } finally {
      server.close();
    }
  });

  it('reads from the real API server, which speaks HTTP/2, what the full client reads', async () => {
    const ns = await createTestNamespace('h2-reads');
    await adminKubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name: 'a', labels: { l: 'v' } }, stringData: { k: 'v' } },
      });
    await kubectl(['create', 'serviceaccount', 'reader', '-n', ns]);
    await kubectl([
      'create',
      'role',
      'reader',
      '-n',
      ns,
      '--verb=get',
      '--resource=secrets,deployments.apps',
    ]);
    await kubectl([
      'create',
      'rolebinding',
      'reader',
      '-n',
      ns,
      '--role=reader',
      `--serviceaccount=${ns}:reader`,
    ]);
    const path = await serviceAccountKubeconfig(ns, 'reader');
    const inNamespace = { ...reads, namespace: ns };
    const state = await readLiveState(preflightReader(path), inNamespace);
    expect([...state.secrets.keys()]).toEqual(['a']);
    expect(state.secrets.get('a')).toMatchObject({
      name: 'a',
      namespace: ns,
      labels: { l: 'v' },
      data: { k: Buffer.from('v').toString('base64') },
    });
    const full = createKubeLiveReader({ kubeConfig: loadKubeConfig(path), userAgent });
    expect(state).toEqual(await readLiveState(full, inNamespace));
  });
});

describe('preflight live reads from a server without HTTP/2', () => {
  /** The reads' answers when `server` speaks HTTP/1.1 only; what it saw. */
  async function readFromHttp1(
    server: ReturnType<typeof createHttpsServer> | TlsServer,
    seen: Seen[],
  ): Promise<void> {
    const port = await listen(server);
    try {
      const state = await readLiveState(preflightReader(kubeconfigFor(port)), reads);
      expect([...state.secrets.keys()]).toEqual(['a']);
      expect(seen).toHaveLength(names.length + 3);
      expect(new Set(seen.map((request) => request.protocol))).toEqual(new Set(['http/1.1']));
      expect(new Set(seen.map((request) => request.authorization))).toEqual(
        new Set(['Bearer the-token']),
      );
    } finally {
      server.close();
    }
  }

  const http1Handler =
    (seen: Seen[]) =>
    (
      request: import('node:http').IncomingMessage,
      response: import('node:http').ServerResponse,
    ) => {
      const path = request.url ?? '';
      seen.push({
        path,
        authorization: request.headers.authorization,
        userAgent: request.headers['user-agent'],
        protocol: `http/${request.httpVersion}`,
      });
      const { status, body } = answer(path);
      response.writeHead(status, { 'content-type': 'application/json' }).end(body);
    };

  it('falls back to HTTP/1.1 when the server refuses the h2 protocol', async () => {
    const seen: Seen[] = [];
    await readFromHttp1(
      createHttpsServer({ key: tls.key, cert: tls.cert }, http1Handler(seen)),
      seen,
    );
  });

  it('falls back to HTTP/1.1 when the server negotiates no protocol at all', async () => {
    const seen: Seen[] = [];
    const http = createHttpServer(http1Handler(seen));
    const server = createTlsServer({ key: tls.key, cert: tls.cert }, (socket) => {
      http.emit('connection', socket);
    });
    await readFromHttp1(server, seen);
  });
});

describe('preflight live reads that cannot be made', () => {
  it('reports an unreachable API server as unreachable, naming the read', async () => {
    const server = createSecureServer({ key: tls.key, cert: tls.cert });
    const port = await listen(server);
    server.close();
    await once(server, 'close');
    const failure = await preflightReader(kubeconfigFor(port))
      .readSecret('ns', 'a')
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(HapticError);
    expect(failure).toMatchObject({ code: errorCodes.KUBE_REQUEST_FAILED });
    expect((failure as Error).message).toContain('read Secret ns/a');
  });

  it('refuses a server whose certificate the kubeconfig does not trust, over HTTP/2 too', async () => {
    const other = await selfSignedCertificate('localhost');
    const server = createSecureServer({ key: other.key, cert: other.cert });
    let streams = 0;
    server.on('stream', () => {
      streams += 1;
    });
    const port = await listen(server);
    try {
      const failure = await preflightReader(kubeconfigFor(port))
        .readSecret('ns', 'a')
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toMatchObject({ code: errorCodes.KUBE_REQUEST_FAILED });
      expect(streams).toBe(0);
    } finally {
      server.close();
    }
  });
});
