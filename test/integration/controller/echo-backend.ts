/**
 * A loopback backend for tests that serve the chart's template with real HAProxy: it answers
 * every request with what it received, as JSON (the service's name, method, path with query,
 * headers, HTTP version, whether the connection was TLS and its ALPN, the peer's address, the
 * body's length), so a test asserts what HAProxy passed on. Four kinds, one per way HAProxy
 * talks to a Service: HTTP/1.1 (`http`), HTTP/1.1 over TLS (`https`), HTTP/2 in clear text
 * (`h2c`, prior knowledge) and HTTP/2 over TLS (`h2s`, ALPN h2).
 *
 * `/slow?ms=N` answers after N ms (default 2,000); `inFlight()` counts the requests received
 * and not yet answered, so a test waits for a slow request to have reached it. A request with a `content-type` of
 * `application/grpc…` over HTTP/2 gets gRPC's answer shape: its JSON, then a `grpc-status: 0`
 * trailer.
 */
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import {
  type Http2SecureServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
  createSecureServer,
  createServer as createH2cServer,
} from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export type EchoKind = 'http' | 'https' | 'h2c' | 'h2s';

/** What the backend received, as it answers it. */
export interface Echoed {
  readonly service: string;
  readonly method: string;
  /** The request target: path and query. */
  readonly path: string;
  /** `1.1` or `2.0`. */
  readonly httpVersion: string;
  /** The Host header, or HTTP/2's :authority. */
  readonly host: string | null;
  /** Headers, lower case, without HTTP/2's pseudo-headers. */
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly tls: boolean;
  /** The protocol ALPN chose on a TLS connection (`h2`), else null. */
  readonly alpn: string | null;
  readonly remoteAddress: string | null;
  readonly bodyBytes: number;
}

export interface EchoBackend {
  readonly service: string;
  readonly kind: EchoKind;
  readonly port: number;
  /** Requests received whose answer is not yet sent. */
  inFlight(): number;
  close(): Promise<void>;
}

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;

function plainHeaders(headers: IncomingHttpHeaders): Record<string, string | readonly string[]> {
  const plain: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(':') || value === undefined) continue;
    plain[name] = value;
  }
  return plain;
}

function handler(service: string, pending: { count: number }) {
  return (request: Request, response: Response): void => {
    pending.count++;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      pending.count--;
    };
    response.on('finish', finish);
    response.on('close', finish);
    let bodyBytes = 0;
    request.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
    });
    request.on('end', () => {
      void (async () => {
        const target = request.url ?? '';
        const url = new URL(target, 'http://echo.invalid');
        if (url.pathname.startsWith('/slow')) {
          await sleep(Number(url.searchParams.get('ms') ?? 2000));
        }
        const socket = request.socket;
        const tls = 'encrypted' in socket && socket.encrypted;
        const alpn = 'alpnProtocol' in socket ? socket.alpnProtocol : false;
        const authority = request.headers[':authority'];
        const echoed: Echoed = {
          service,
          method: request.method ?? '',
          path: target,
          httpVersion: request.httpVersion,
          host: request.headers.host ?? (typeof authority === 'string' ? authority : null),
          headers: plainHeaders(request.headers),
          tls,
          alpn: typeof alpn === 'string' ? alpn : null,
          remoteAddress: socket.remoteAddress ?? null,
          bodyBytes,
        };
        const grpc =
          request.httpVersion === '2.0' &&
          (request.headers['content-type'] ?? '').startsWith('application/grpc');
        if (grpc) {
          const h2 = response as Http2ServerResponse;
          h2.writeHead(200, { 'content-type': 'application/grpc' });
          h2.addTrailers({ 'grpc-status': '0', 'grpc-message': 'echoed' });
          h2.end(JSON.stringify(echoed));
          return;
        }
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(echoed));
      })();
    });
  };
}

/** Starts an echo backend of `kind` on 127.0.0.1 (a random port); TLS kinds need `tls`. */
export async function startEchoBackend(
  service: string,
  kind: EchoKind,
  tls?: { readonly cert: string; readonly key: string },
): Promise<EchoBackend> {
  const pending = { count: 0 };
  const handle = handler(service, pending);
  let server: Server | Http2Server | Http2SecureServer;
  const sessions = new Set<ServerHttp2Session>();
  switch (kind) {
    case 'http':
      server = createServer(handle);
      break;
    case 'https':
      if (tls === undefined) throw new Error('an https echo backend needs a certificate');
      server = createHttpsServer({ ...tls, ALPNProtocols: ['http/1.1'] }, handle);
      break;
    case 'h2c':
      server = createH2cServer(handle);
      break;
    case 'h2s':
      if (tls === undefined) throw new Error('an h2s echo backend needs a certificate');
      server = createSecureServer({ ...tls, allowHTTP1: false }, handle);
      break;
  }
  if (kind === 'h2c' || kind === 'h2s') {
    server.on('session', (session: ServerHttp2Session) => {
      sessions.add(session);
      session.on('close', () => sessions.delete(session));
    });
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new Error('the echo backend has no port');
  return {
    service,
    kind,
    port: bound.port,
    inFlight: () => pending.count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
