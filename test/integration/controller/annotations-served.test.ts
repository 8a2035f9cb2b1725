/**
 * The Ingress annotations the controller reads (ingress-nginx's and haproxy.org's), served: the
 * chart's default template is rendered as the controller renders it (model, templates, lint,
 * `haproxy -c`), served by real HAProxy, and asked with real HTTP/1.1, HTTPS and HTTP/2
 * requests. Each annotation is proven by what the client gets (status, Location, HSTS, CORS
 * headers, the affinity cookie) and what the backend received (path after a rewrite, Host,
 * X-Forwarded-*, X-Real-IP, the HTTP version and TLS of the connection HAProxy opened), or
 * which of a Service's two endpoints answered (affinity, load-balance, upstream-hash-by), and
 * how many requests of one client address are refused (limit-rps, limit-connections), as
 * ingress-nginx would serve it. An
 * Ingress with a value that does not parse, a snippet or an auth-* annotation is left out
 * (its host answered by the template's 404), with a warning naming the annotation, the value
 * and the form it should have, while the other Ingresses of the same render are served.
 *
 * The model refuses loopback endpoints (as it should), so the Services' endpoints are 10.0.0.x
 * addresses and only the rendered `server` lines are pointed at this test's loopback backends
 * (echo-backend.ts) before HAProxy starts; the frontend, maps and crt-list are served as
 * rendered. No Kubernetes node is used.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { type Socket, connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SupervisedProcess, startSupervised } from '../../../dev/lib/supervised-process.ts';
import type { ClusterSnapshot } from '../../../src/controller/routing/cluster-snapshot.ts';
import type { ModelResult } from '../../../src/controller/routing/model-types.ts';
import { inspectConfigFiles } from '../../../src/haproxy/files-lint.ts';
import { type IngressView, readIngress } from '../../../src/validation/ingress-view.ts';
import { eventually } from '../../support/eventually.ts';
import {
  renderDefaultTemplate,
  serveRendered,
  shopSnapshot,
} from '../../support/served-template.ts';
import { selfSignedCertificate } from '../../support/self-signed.ts';
import { type EchoBackend, type EchoKind, type Echoed, startEchoBackend } from './echo-backend.ts';

/**
 * This file's own loopback address: HAProxy binds the template's fixed ports 8080 and 8443
 * (host-header-routing.test.ts has 127.0.37.1, the agent tests 127.0.2x.1).
 */
const address = '127.0.38.1';
/** Client addresses of the allow- and deny-list cases (all of 127.0.0.0/8 is the host's). */
const client = '127.0.38.9';
const denied = '127.0.38.2';
const allowedOne = '127.0.38.3';
const root = mkdtempSync(join(tmpdir(), 'haptic-annotations-'));
const n = 'nginx.ingress.kubernetes.io/';
const h = 'haproxy.org/';

/**
 * The Services: one loopback backend of its kind per endpoint; `blackhole` never accepts.
 * `pair` has two endpoints (echo backends `pair-1` and `pair-2`), for affinity and balancing;
 * `limited` serves limit-connections alone, so its requests in flight are that test's.
 */
const services: Readonly<Record<string, readonly (EchoKind | 'blackhole')[]>> = {
  echo: ['http'],
  other: ['http'],
  secure: ['https'],
  h2c: ['h2c'],
  h2s: ['h2s'],
  blackhole: ['blackhole'],
  pair: ['http', 'http'],
  limited: ['http'],
};
type ServiceName = keyof typeof services;
const serviceNames = Object.keys(services);

/** Every endpoint: its Service, its 10.0.0.x address in the EndpointSlice, its backend's name. */
const endpoints = serviceNames
  .flatMap((service) =>
    (services[service] ?? []).map((kind, index, kinds) => ({
      service,
      kind,
      name: kinds.length === 1 ? service : `${service}-${String(index + 1)}`,
    })),
  )
  .map((endpoint, index) => ({ ...endpoint, address: `10.0.0.${String(index + 1)}` }));

const backends: EchoBackend[] = [];
const sockets: Socket[] = [];
let haproxy: SupervisedProcess | undefined;
let blackhole: SupervisedProcess | undefined;

function route(path: string, service: ServiceName, pathType = 'Prefix') {
  return { path, pathType, backend: { service: { name: service, port: { number: 80 } } } };
}

function ingress(
  name: string,
  host: string,
  annotations: Record<string, string>,
  options: {
    readonly paths?: readonly ReturnType<typeof route>[];
    readonly tls?: boolean;
    readonly service?: ServiceName;
  } = {},
): IngressView {
  const view = readIngress({
    kind: 'Ingress',
    metadata: {
      namespace: 'shop',
      name,
      annotations,
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: {
      ingressClassName: 'haptic',
      ...(options.tls === true ? { tls: [{ hosts: [host], secretName: 'tls' }] } : {}),
      rules: [{ host, http: { paths: options.paths ?? [route('/', options.service ?? 'echo')] } }],
    },
  });
  if (typeof view === 'string') throw new Error(view);
  return view;
}

/** Every Ingress of the render, one host each. */
function ingresses(): IngressView[] {
  const regex = (path: string, service: ServiceName = 'echo') =>
    route(path, service, 'ImplementationSpecific');
  return [
    ingress('plain', 'plain.example.com', {}),
    ingress('isolated', 'isolated.example.com', {}, { paths: [route('/x', 'echo')] }),
    // HTTPS redirects and HSTS
    ingress('secure', 'secure.example.com', {}, { tls: true }),
    ingress('nossl', 'nossl.example.com', { [`${n}ssl-redirect`]: 'false' }, { tls: true }),
    ingress('force', 'force.example.com', { [`${n}force-ssl-redirect`]: 'true' }),
    ingress('code', 'code.example.com', { [`${h}ssl-redirect-code`]: '301' }, { tls: true }),
    // Regex paths and rewrites
    ingress(
      'rewrite',
      'rewrite.example.com',
      { [`${n}rewrite-target`]: '/$2' },
      { paths: [regex('/app(/|$)(.*)')] },
    ),
    ingress(
      'strip',
      'strip.example.com',
      { [`${n}rewrite-target`]: '/' },
      { paths: [regex('/foo')] },
    ),
    ingress(
      'alt',
      'alt.example.com',
      { [`${n}use-regex`]: 'true' },
      { paths: [regex('/a|/b', 'other')] },
    ),
    ingress(
      'groups',
      'groups.example.com',
      { [`${n}rewrite-target`]: '/$3' },
      { paths: [regex('/x(/|$)(.*)'), regex('/y/(a)(b)(c)')] },
    ),
    ingress('vhost', 'vhost.example.com', { [`${n}upstream-vhost`]: 'internal.example.svc' }),
    ingress('approot', 'approot.example.com', { [`${n}app-root`]: '/dashboard' }),
    // Redirects
    ingress('moved', 'moved.example.com', {
      [`${n}permanent-redirect`]: 'https://new.example.com/landing%20page?from=old',
    }),
    ingress('moved308', 'moved308.example.com', {
      [`${n}permanent-redirect`]: 'https://new.example.com/',
      [`${n}permanent-redirect-code`]: '308',
    }),
    ingress('temp', 'temp.example.com', {
      [`${n}temporal-redirect`]: 'https://maintenance.example.com/',
    }),
    ingress('temp307', 'temp307.example.com', {
      [`${n}temporal-redirect`]: 'http://maintenance.example.com/soon',
      [`${n}temporal-redirect-code`]: '307',
    }),
    // Timeouts
    ingress('read', 'read.example.com', { [`${n}proxy-read-timeout`]: '1' }),
    ingress('send', 'send.example.com', { [`${n}proxy-send-timeout`]: '1' }),
    ingress(
      'connect',
      'connect.example.com',
      { [`${n}proxy-connect-timeout`]: '1' },
      { service: 'blackhole' },
    ),
    // Body size
    ingress('big', 'big.example.com', { [`${n}proxy-body-size`]: '8m' }),
    ingress('nolimit', 'nolimit.example.com', { [`${n}proxy-body-size`]: '0' }),
    // Client address lists
    ingress('allow', 'allow.example.com', { [`${n}whitelist-source-range`]: '127.0.0.0/8' }),
    ingress('allowno', 'allowno.example.com', {
      [`${n}allowlist-source-range`]: '10.0.0.0/8, 192.0.2.7',
    }),
    ingress('allowone', 'allowone.example.com', { [`${h}allow-list`]: `${allowedOne}/32` }),
    ingress('deny', 'deny.example.com', { [`${n}denylist-source-range`]: denied }),
    // Backend protocols
    ingress('http', 'http.example.com', { [`${n}backend-protocol`]: 'HTTP' }),
    ingress(
      'https',
      'https.example.com',
      { [`${n}backend-protocol`]: 'HTTPS' },
      { service: 'secure' },
    ),
    ingress('grpc', 'grpc.example.com', { [`${n}backend-protocol`]: 'GRPC' }, { service: 'h2c' }),
    ingress('h2c', 'h2c.example.com', { [`${n}backend-protocol`]: 'h2c' }, { service: 'h2c' }),
    ingress(
      'grpcs',
      'grpcs.example.com',
      { [`${n}backend-protocol`]: 'GRPCS' },
      { service: 'h2s' },
    ),
    // CORS
    ingress('cors', 'cors.example.com', { [`${n}enable-cors`]: 'true' }),
    ingress('corslist', 'corslist.example.com', {
      [`${n}enable-cors`]: 'true',
      [`${n}cors-allow-origin`]: 'https://app.example.com, https://admin.example.com:8443',
      [`${n}cors-allow-methods`]: 'GET, POST',
      [`${n}cors-allow-headers`]: 'X-Custom, Authorization',
      [`${n}cors-expose-headers`]: 'X-Trace, X-Total',
      [`${n}cors-max-age`]: '600',
    }),
    ingress('corsany', 'corsany.example.com', {
      [`${n}enable-cors`]: 'true',
      [`${n}cors-allow-origin`]: '*',
      [`${n}cors-allow-credentials`]: 'false',
    }),
    // Affinity and balancing, over the two endpoints of `pair`
    ingress('sticky', 'sticky.example.com', { [`${n}affinity`]: 'cookie' }, { service: 'pair' }),
    ingress(
      'stickyattrs',
      'stickyattrs.example.com',
      {
        [`${n}affinity`]: 'cookie',
        [`${n}session-cookie-name`]: 'route',
        [`${n}session-cookie-max-age`]: '3600',
        [`${n}session-cookie-path`]: '/app',
        [`${n}session-cookie-samesite`]: 'Strict',
      },
      { service: 'pair' },
    ),
    ingress('roundrobin', 'roundrobin.example.com', {}, { service: 'pair' }),
    ingress('ewma', 'ewma.example.com', { [`${n}load-balance`]: 'ewma' }, { service: 'pair' }),
    ingress(
      'hashhdr',
      'hashhdr.example.com',
      { [`${n}upstream-hash-by`]: '$http_x_user' },
      { service: 'pair' },
    ),
    ingress(
      'hashsrc',
      'hashsrc.example.com',
      { [`${n}upstream-hash-by`]: '$remote_addr' },
      { service: 'pair' },
    ),
    ingress(
      'hashcookie',
      'hashcookie.example.com',
      { [`${n}upstream-hash-by`]: '$cookie_session' },
      { service: 'pair' },
    ),
    ingress(
      'hashuri',
      'hashuri.example.com',
      { [`${n}upstream-hash-by`]: '$request_uri' },
      { service: 'pair' },
    ),
    // Per-client limits
    ingress('rps', 'rps.example.com', { [`${n}limit-rps`]: '5' }),
    ingress(
      'conns',
      'conns.example.com',
      { [`${n}limit-connections`]: '2' },
      { service: 'limited' },
    ),
    // HSTS on HAProxy's own answers
    ingress(
      'hstsallow',
      'hstsallow.example.com',
      { [`${n}whitelist-source-range`]: '10.0.0.0/8' },
      { tls: true },
    ),
    ingress(
      'hstsown',
      'hstsown.example.com',
      { [`${n}app-root`]: '/start', [`${n}proxy-read-timeout`]: '1' },
      { tls: true },
    ),
    // Left out: a bad value, a snippet, authentication, an allow-list that does not parse
    ingress('bad', 'bad.example.com', { [`${n}proxy-body-size`]: 'huge' }),
    ingress('good', 'good.example.com', { [`${n}proxy-body-size`]: '2m' }),
    ingress('snippet', 'snippet.example.com', {
      [`${n}configuration-snippet`]: 'more_set_headers "X: y";',
    }),
    ingress('auth', 'auth.example.com', { [`${n}auth-url`]: 'https://auth.example.com/check' }),
    ingress('badallow', 'badallow.example.com', {
      [`${n}whitelist-source-range`]: '10.0.0.0/33',
    }),
  ];
}

function snapshot(): Promise<ClusterSnapshot> {
  const addresses = Object.fromEntries(
    serviceNames.map((name) => [
      name,
      endpoints.filter((endpoint) => endpoint.service === name).map(({ address }) => address),
    ]),
  );
  return shopSnapshot(ingresses(), addresses, 'secure.example.com');
}

/**
 * A TCP listener that never accepts: its process blocks its only thread, so once its backlog
 * is full the kernel drops new SYNs and a connect hangs until the connector's timeout.
 */
async function startBlackhole(): Promise<number> {
  const code = [
    "const server = require('node:net').createServer();",
    "server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {",
    '  require("node:fs").writeSync(1, `port ${server.address().port}\\n`);',
    '  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300000);',
    '  process.exit(0);',
    '});',
  ].join('\n');
  const log = join(root, 'blackhole.log');
  blackhole = startSupervised({
    name: 'blackhole',
    command: process.execPath,
    args: ['-e', code],
    logFile: log,
  });
  const port = await eventually(
    'the blackhole listens',
    () => Promise.resolve(Number(/port (\d+)/.exec(readFileSync(log, 'utf8'))?.[1] ?? 0)),
    (port) => port > 0,
    10_000,
  );
  // Fill the accept queue (backlog 1 holds 2): later SYNs, HAProxy's among them, are dropped.
  for (let i = 0; i < 2; i++) {
    await new Promise<void>((resolve, reject) => {
      const socket = netConnect(port, '127.0.0.1', resolve);
      socket.on('error', reject);
      sockets.push(socket);
    });
  }
  return port;
}

let rendered: ReadonlyMap<string, Buffer>;
let model: ModelResult;

beforeAll(async () => {
  ({ files: rendered, model } = renderDefaultTemplate(await snapshot()));
  haproxy = await serveRendered({
    name: 'haproxy annotations',
    root,
    address,
    files: rendered,
    // Only now, the endpoints become this test's backends.
    backends: async () => {
      const certificate = await selfSignedCertificate('backend.shop.svc', { parent: root });
      const ports = new Map<string, number>();
      for (const endpoint of endpoints) {
        let port: number;
        if (endpoint.kind === 'blackhole') {
          port = await startBlackhole();
        } else {
          const backend = await startEchoBackend(endpoint.name, endpoint.kind, certificate);
          backends.push(backend);
          port = backend.port;
        }
        ports.set(`${endpoint.address}:8080`, port);
      }
      return ports;
    },
    servers: (pointed) => {
      expect(pointed).toBeGreaterThanOrEqual(endpoints.length);
    },
  });
}, 60_000);

afterAll(async () => {
  await haproxy?.stop();
  await blackhole?.stop();
  for (const socket of sockets) socket.destroy();
  await Promise.all(backends.map((backend) => backend.close()));
  rmSync(root, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** What the backend received, when it answered. */
  readonly echoed: Echoed | undefined;
}

interface Ask {
  /** HTTPS on 8443 (SNI: the host) instead of HTTP on 8080. */
  readonly tls?: boolean;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /** The client's address. @default client */
  readonly from?: string;
}

function answerOf(status: number, headers: IncomingHttpHeaders, body: string): Answer {
  const json = status === 200 && headers['content-type'] === 'application/json';
  return { status, headers, body, echoed: json ? (JSON.parse(body) as Echoed) : undefined };
}

/** One HTTP/1.1 request through HAProxy for `host` + `target`. */
function ask(host: string, target: string, options: Ask = {}): Promise<Answer> {
  const send = options.tls === true ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      {
        host: address,
        port: options.tls === true ? 8443 : 8080,
        path: target,
        method: options.method ?? 'GET',
        headers: { host, ...options.headers },
        localAddress: options.from ?? client,
        agent: false,
        servername: host,
        rejectUnauthorized: false,
        timeout: 30_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const body = Buffer.concat(chunks).toString();
          resolve(answerOf(response.statusCode ?? 0, response.headers, body));
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer for ${host}${target}`)));
    request.on('error', reject);
    request.end(options.body);
  });
}

/**
 * The status and headers (lower-case names, last value) of the answer to a request whose head
 * only is sent: `Content-Length` announced, no body; over TLS (SNI: the host) with `tls`.
 */
async function headOf(
  host: string,
  contentLength: number,
  options: { readonly tls?: boolean } = {},
): Promise<{ status: number; headers: Map<string, string> }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const send = () => {
      socket.write(
        `POST /upload HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${String(contentLength)}\r\n\r\n`,
      );
    };
    const socket =
      options.tls === true
        ? tlsConnect(
            {
              socket: netConnect({ port: 8443, host: address, localAddress: client }),
              servername: host,
              rejectUnauthorized: false,
            },
            send,
          )
        : netConnect({ port: 8080, host: address, localAddress: client }, send);
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer from ${host}`)));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      if (status !== undefined && end >= 0) {
        const headers = new Map<string, string>();
        for (const line of text.slice(0, end).split('\r\n').slice(1)) {
          const colon = line.indexOf(':');
          headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
        }
        socket.destroy();
        resolve({ status: Number(status), headers });
      }
    });
    socket.on('error', reject);
  });
}

/** The status of a request whose head only is sent (headOf). */
async function statusOfHead(host: string, contentLength: number): Promise<number> {
  return (await headOf(host, contentLength)).status;
}

interface H2Answer {
  readonly status: number;
  readonly echoed: Echoed;
  readonly trailers: IncomingHttpHeaders;
}

/** One HTTP/2 request over TLS (ALPN h2) to `host`, gRPC-shaped (POST, application/grpc). */
async function h2Grpc(host: string, path: string): Promise<H2Answer> {
  const session = http2Connect(`https://${address}:8443`, {
    rejectUnauthorized: false,
    servername: host,
  });
  try {
    return await new Promise<H2Answer>((resolve, reject) => {
      session.on('error', reject);
      const stream = session.request({
        ':method': 'POST',
        ':path': path,
        ':authority': host,
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      let status = 0;
      let trailers: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      stream.on('response', (headers) => {
        status = Number(headers[':status']);
      });
      stream.on('trailers', (received: IncomingHttpHeaders) => {
        trailers = { ...received };
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const echoed: Echoed = JSON.parse(Buffer.concat(chunks).toString()) as Echoed;
        resolve({ status, echoed, trailers });
      });
      stream.on('error', reject);
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
  } finally {
    session.close();
  }
}

const notFound = { status: 404, body: '404 no Ingress matches this host and path' };
const hsts = 'max-age=31536000; includeSubDomains';

/** The model's warnings on Ingress shop/`name`, as `<reason>: <message>`. */
function warningsOf(name: string): string[] {
  return model.warnings
    .filter((warning) => warning.ingress === `shop/${name}`)
    .map((warning) => `${warning.reason}: ${warning.message}`);
}

/** Client addresses of the limit cases, used by nothing else. */
const rpsClient = '127.0.38.50';
const rpsOther = '127.0.38.51';
const rpsSteady = '127.0.38.54';
const connsClient = '127.0.38.52';
const connsOther = '127.0.38.53';
const rpsBody = '503 too many requests a second from this client address';
const connsBody = '503 too many concurrent requests from this client address';

/** The Access-Control-* headers of an answer. */
function corsHeaders(answer: Answer): Record<string, string> {
  return Object.fromEntries(
    Object.entries(answer.headers)
      .filter(([name]) => name.startsWith('access-control-'))
      .map(([name, value]) => [name, String(value)]),
  );
}

/** The Vary header's names, lower case. */
function varyOf(answer: Answer): string[] {
  return (answer.headers.vary ?? '').split(',').map((name) => name.trim().toLowerCase());
}

/** The one Set-Cookie of `name`: its value and its attributes as written. */
function setCookieOf(answer: Answer, name: string): { value: string; attributes: string[] } {
  const cookies = (answer.headers['set-cookie'] ?? []).filter((cookie) =>
    cookie.startsWith(`${name}=`),
  );
  expect(cookies, JSON.stringify(answer.headers)).toHaveLength(1);
  const [pair = '', ...attributes] = (cookies[0] ?? '').split(';').map((part) => part.trim());
  return { value: pair.slice(name.length + 1), attributes };
}

/** `count` answers of `send`, one after another. */
async function sequence(count: number, send: () => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < count; i++) answers.push(await send());
  return answers;
}

function echoNamed(name: string): EchoBackend {
  const found = backends.find((backend) => backend.service === name);
  if (found === undefined) throw new Error(`no echo backend ${name}`);
  return found;
}

/** The rendered backend section of Ingress shop/`ingressName`'s only route. */
function backendSection(cfg: string, ingressName: string): string {
  const name = model.model.routes.find((route) => route.ingress === `shop/${ingressName}`)?.backend;
  if (name === undefined) throw new Error(`no route of shop/${ingressName}`);
  const start = cfg.indexOf(`\nbackend ${name}\n`);
  if (start < 0) throw new Error(`no backend ${name}`);
  const end = cfg.indexOf('\nbackend ', start + 1);
  return cfg.slice(start, end < 0 ? undefined : end);
}

function served(answer: Answer): Echoed {
  expect(answer.status, answer.body).toBe(200);
  if (answer.echoed === undefined) throw new Error(`no echo: ${answer.body}`);
  return answer.echoed;
}

describe('ingress-nginx annotations served through the default template', () => {
  it('renders a configuration the lint and haproxy -c accept, with the annotations written', () => {
    const findings = inspectConfigFiles((file) => rendered.get(file)?.toString()).findings;
    expect(findings).toEqual([]);
    const cfg = rendered.get('haproxy.cfg')?.toString() ?? '';
    expect(cfg).toContain("http-request replace-path '(?i)^(?:/app(/|$)(.*))' '/\\2'");
    expect(cfg).toContain('timeout server 1s');
    expect(cfg).toContain('timeout connect 1s');
    const regexMap = rendered.get('maps/regex.map')?.toString() ?? '';
    // use-regex alone asks nothing of the backend: the Service port's plain backend.
    expect(regexMap).toContain('(?i)^alt\\.example\\.com(?=/)(?:/a|/b) shop:other:80\n');
  });

  it('sets X-Forwarded-For, -Proto, -Host, -Port and X-Real-IP, replacing what the client sent', async () => {
    const forged = {
      'x-forwarded-for': '203.0.113.9',
      'x-real-ip': '203.0.113.9',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-port': '443',
    };
    const [http, https] = await Promise.all([
      ask('plain.example.com', '/x?q=1', { headers: forged }),
      ask('plain.example.com', '/y', { tls: true, headers: forged }),
    ]);
    expect(served(http)).toMatchObject({
      service: 'echo',
      path: '/x?q=1',
      host: 'plain.example.com',
      headers: {
        'x-forwarded-for': client,
        'x-real-ip': client,
        'x-forwarded-proto': 'http',
        'x-forwarded-host': 'plain.example.com',
        'x-forwarded-port': '80',
      },
    });
    expect(served(https).headers).toMatchObject({
      'x-forwarded-for': client,
      'x-real-ip': client,
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'plain.example.com',
      'x-forwarded-port': '443',
    });
    // Not a TLS host of its Ingress: no HSTS, even over HTTPS.
    expect(https.headers['strict-transport-security']).toBeUndefined();
  });

  it('redirects HTTP to HTTPS on a TLS host (308, query kept) and sends HSTS over HTTPS only', async () => {
    const [redirected, ...others] = await Promise.all([
      ask('secure.example.com', '/path/x?q=1&r=a%20b'),
      // The HTTP port of the Host is not the HTTPS one: dropped, as ingress-nginx does.
      ask('secure.example.com:80', '/p'),
      ask('SECURE.example.com:8080', '/p?a'),
      ask('secure.example.com.', '/p/'),
    ]);
    const overTls = await ask('secure.example.com', '/path/x?q=1', { tls: true });
    expect(redirected.status).toBe(308);
    expect(redirected.headers.location).toBe('https://secure.example.com/path/x?q=1&r=a%20b');
    expect(redirected.headers['strict-transport-security']).toBeUndefined();
    expect(others.map((answer) => [answer.status, answer.headers.location])).toEqual([
      [308, 'https://secure.example.com/p'],
      [308, 'https://secure.example.com/p?a'],
      [308, 'https://secure.example.com/p/'],
    ]);
    expect(served(overTls)).toMatchObject({ path: '/path/x?q=1' });
    expect(overTls.headers['strict-transport-security']).toBe(hsts);
  });

  it('serves HTTP on a TLS host with ssl-redirect "false", HSTS still on its HTTPS answers', async () => {
    const [http, https] = await Promise.all([
      ask('nossl.example.com', '/plain?x=1'),
      ask('nossl.example.com', '/tls', { tls: true }),
    ]);
    expect(served(http)).toMatchObject({ path: '/plain?x=1' });
    expect(http.headers['strict-transport-security']).toBeUndefined();
    expect(served(https)).toMatchObject({ path: '/tls' });
    expect(https.headers['strict-transport-security']).toBe(hsts);
  });

  it('redirects every host with force-ssl-redirect, and with haproxy.org/ssl-redirect-code', async () => {
    const [forced, forcedTls, coded] = await Promise.all([
      ask('force.example.com', '/f?a=1'),
      ask('force.example.com', '/f', { tls: true }),
      ask('code.example.com', '/c'),
    ]);
    expect([forced.status, forced.headers.location]).toEqual([
      308,
      'https://force.example.com/f?a=1',
    ]);
    expect(served(forcedTls)).toMatchObject({ path: '/f' });
    // Not a TLS host of its Ingress: redirected, but no HSTS.
    expect(forcedTls.headers['strict-transport-security']).toBeUndefined();
    expect([coded.status, coded.headers.location]).toEqual([301, 'https://code.example.com/c']);
  });

  it('rewrites /app(/|$)(.*) to /$2, case-insensitively, keeping the query', async () => {
    const answers = await Promise.all([
      ask('rewrite.example.com', '/app/x/y?q=1'),
      ask('rewrite.example.com', '/app'),
      ask('rewrite.example.com', '/app/'),
      ask('rewrite.example.com', '/APP/x'),
      ask('REWRITE.example.com', '/App/z?b=2'),
      ask('rewrite.example.com', '/application'),
      ask('rewrite.example.com', '/other'),
    ]);
    expect(answers.slice(0, 5).map((answer) => served(answer).path)).toEqual([
      '/x/y?q=1',
      '/',
      '/',
      '/x',
      '/z?b=2',
    ]);
    expect(answers.slice(5).map(({ status, body }) => ({ status, body }))).toEqual([
      notFound,
      notFound,
    ]);
  });

  it("rewrites a path without groups to the rewrite-target whole, as nginx's rewrite does", async () => {
    const answers = await Promise.all([
      ask('strip.example.com', '/foo/bar?x=1'),
      ask('strip.example.com', '/foo'),
      ask('strip.example.com', '/FOOBAR'),
    ]);
    expect(answers.map((answer) => served(answer).path)).toEqual(['/?x=1', '/', '/']);
  });

  it('keeps a regex alternative /a|/b under its own host', async () => {
    const [a, b, deep, none, isolated, plain] = await Promise.all([
      ask('alt.example.com', '/a'),
      ask('alt.example.com', '/b'),
      ask('alt.example.com', '/B/deep?x=1'),
      ask('alt.example.com', '/c'),
      ask('isolated.example.com', '/b'),
      ask('plain.example.com', '/b'),
    ]);
    expect([a, b, deep].map((answer) => [served(answer).service, served(answer).path])).toEqual([
      ['other', '/a'],
      ['other', '/b'],
      ['other', '/B/deep?x=1'],
    ]);
    expect({ status: none.status, body: none.body }).toEqual(notFound);
    expect({ status: isolated.status, body: isolated.body }).toEqual(notFound);
    expect(served(plain)).toMatchObject({ service: 'echo', path: '/b' });
  });

  it('leaves out a path whose rewrite-target names a group it does not have, serving the others', async () => {
    const [x, y] = await Promise.all([
      ask('groups.example.com', '/x/1/2'),
      ask('groups.example.com', '/y/abc/rest'),
    ]);
    expect({ status: x.status, body: x.body }).toEqual(notFound);
    expect(served(y).path).toBe('/c');
    const warnings = warningsOf('groups');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      'AnnotationInvalid: Ingress shop/groups has spec.rules[0].http.paths[0], whose rewrite-target names $3, but the path "/x(/|$)(.*)" has 2 capture group(s)',
    );
  });

  it('sends the upstream-vhost as Host, the client’s host as X-Forwarded-Host', async () => {
    expect(served(await ask('vhost.example.com', '/v'))).toMatchObject({
      host: 'internal.example.svc',
      path: '/v',
      headers: { 'x-forwarded-host': 'vhost.example.com' },
    });
  });

  it('redirects / to the app-root (302) and serves other paths', async () => {
    const [rootPath, app, other] = await Promise.all([
      ask('approot.example.com', '/'),
      ask('approot.example.com', '/dashboard'),
      ask('approot.example.com', '/other'),
    ]);
    expect(rootPath.status).toBe(302);
    expect(new URL(rootPath.headers.location ?? '', 'http://approot.example.com/').href).toBe(
      'http://approot.example.com/dashboard',
    );
    expect(served(app).path).toBe('/dashboard');
    expect(served(other).path).toBe('/other');
  });

  it('answers permanent-redirect and temporal-redirect with their codes and URLs as written', async () => {
    const answers = await Promise.all([
      ask('moved.example.com', '/any/path?q=1'),
      ask('moved308.example.com', '/'),
      ask('temp.example.com', '/x'),
      ask('temp307.example.com', '/y'),
    ]);
    expect(answers.map((answer) => [answer.status, answer.headers.location])).toEqual([
      [301, 'https://new.example.com/landing%20page?from=old'],
      [308, 'https://new.example.com/'],
      [302, 'https://maintenance.example.com/'],
      [307, 'http://maintenance.example.com/soon'],
    ]);
  });

  it('answers 504 when the backend is slower than proxy-read-timeout or proxy-send-timeout', async () => {
    const started = Date.now();
    const [read, send, fast, plain] = await Promise.all([
      ask('read.example.com', '/slow?ms=2500'),
      ask('send.example.com', '/slow?ms=2500'),
      ask('read.example.com', '/slow?ms=100'),
      ask('plain.example.com', '/slow?ms=2500'),
    ]);
    expect(read.status).toBe(504);
    expect(send.status).toBe(504);
    expect(served(fast).path).toBe('/slow?ms=100');
    // The default (60 s) waits for the same backend.
    expect(served(plain).path).toBe('/slow?ms=2500');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('gives up connecting after proxy-connect-timeout', async () => {
    const started = Date.now();
    const answer = await ask('connect.example.com', '/');
    const elapsed = Date.now() - started;
    expect(answer.status).toBe(503);
    // 1 s per attempt (HAProxy retries 3 times); the default 5 s would take 20 s.
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    expect(elapsed).toBeLessThan(10_000);
  });

  it('answers 413 over proxy-body-size by Content-Length: 1m by default, 8m, none with "0"', async () => {
    const twoMegabytes = Buffer.alloc(2 * 1024 * 1024, 'a');
    const [plainOver, plainLimit, bigOver, big, nolimit] = await Promise.all([
      statusOfHead('plain.example.com', 2 * 1024 * 1024),
      ask('plain.example.com', '/upload', { method: 'POST', body: Buffer.alloc(1024 * 1024) }),
      statusOfHead('big.example.com', 8 * 1024 * 1024 + 1),
      ask('big.example.com', '/upload', { method: 'POST', body: twoMegabytes }),
      ask('nolimit.example.com', '/upload', { method: 'POST', body: twoMegabytes }),
    ]);
    expect(plainOver).toBe(413);
    expect(served(plainLimit).bodyBytes).toBe(1024 * 1024);
    expect(bigOver).toBe(413);
    expect(served(big).bodyBytes).toBe(2 * 1024 * 1024);
    expect(served(nolimit).bodyBytes).toBe(2 * 1024 * 1024);
  });

  it('serves the allow-list’s client addresses only, and refuses the deny-list’s (403)', async () => {
    const answers = await Promise.all([
      ask('allow.example.com', '/'),
      ask('allowno.example.com', '/'),
      ask('allowone.example.com', '/', { from: allowedOne }),
      ask('allowone.example.com', '/', { from: client }),
      ask('deny.example.com', '/', { from: denied }),
      ask('deny.example.com', '/', { from: client }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 403, 200, 403, 403, 200]);
    expect(served(answers[2]).headers['x-real-ip']).toBe(allowedOne);
  });

  it('talks HTTPS, h2c and h2 over TLS to the Service as backend-protocol asks', async () => {
    const [http, https, h2c, grpc, grpcs] = await Promise.all([
      ask('http.example.com', '/h'),
      ask('https.example.com', '/s?x=1'),
      ask('h2c.example.com', '/c'),
      h2Grpc('grpc.example.com', '/echo.Echo/Say'),
      h2Grpc('grpcs.example.com', '/echo.Echo/Say'),
    ]);
    expect(served(http)).toMatchObject({ httpVersion: '1.1', tls: false });
    expect(served(https)).toMatchObject({
      service: 'secure',
      path: '/s?x=1',
      httpVersion: '1.1',
      tls: true,
      host: 'https.example.com',
    });
    expect(served(h2c)).toMatchObject({
      service: 'h2c',
      path: '/c',
      httpVersion: '2.0',
      tls: false,
      host: 'h2c.example.com',
      headers: { 'x-forwarded-proto': 'http' },
    });
    expect(grpc.status).toBe(200);
    expect(grpc.echoed).toMatchObject({
      service: 'h2c',
      method: 'POST',
      path: '/echo.Echo/Say',
      httpVersion: '2.0',
      tls: false,
      bodyBytes: 5,
      headers: { 'content-type': 'application/grpc', 'x-forwarded-proto': 'https' },
    });
    expect(grpc.trailers).toMatchObject({ 'grpc-status': '0' });
    expect(grpcs.status).toBe(200);
    expect(grpcs.echoed).toMatchObject({
      service: 'h2s',
      httpVersion: '2.0',
      tls: true,
      alpn: 'h2',
    });
    expect(grpcs.trailers).toMatchObject({ 'grpc-status': '0' });
  });

  it('answers a CORS preflight itself (204) with ingress-nginx’s defaults, any origin as "*"', async () => {
    const origin = 'https://site.example.org';
    const [preflight, get, options, noOrigin, nullOrigin] = await Promise.all([
      ask('cors.example.com', '/api/items', {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'authorization',
        },
      }),
      ask('cors.example.com', '/api/items', { headers: { origin } }),
      // An OPTIONS without Access-Control-Request-Method is no preflight: the backend's.
      ask('cors.example.com', '/api/items', { method: 'OPTIONS', headers: { origin } }),
      ask('cors.example.com', '/api/items'),
      ask('cors.example.com', '/api/items', { headers: { origin: 'null' } }),
    ]);
    expect(preflight.status).toBe(204);
    // HAProxy's answer: the backend (which answers everything 200 with JSON) was not asked.
    expect(preflight.echoed).toBeUndefined();
    expect(preflight.body).toBe('');
    // "*", as ingress-nginx answers: with it a browser sends no cookies, while the request's
    // Origin echoed with credentials would let every site read a signed-in user's answers.
    expect(corsHeaders(preflight)).toEqual({
      'access-control-allow-origin': '*',
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, PUT, POST, DELETE, PATCH, OPTIONS',
      'access-control-allow-headers':
        'DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, Range, Authorization',
      'access-control-max-age': '1728000',
    });
    expect(varyOf(preflight)).toContain('origin');
    expect(served(get)).toMatchObject({ method: 'GET', path: '/api/items' });
    expect(corsHeaders(get)).toEqual({
      'access-control-allow-origin': '*',
      'access-control-allow-credentials': 'true',
    });
    expect(varyOf(get)).toContain('origin');
    expect(served(options)).toMatchObject({ method: 'OPTIONS' });
    expect(corsHeaders(options)['access-control-allow-origin']).toBe('*');
    // A sandboxed document's Origin is not echoed either.
    expect(corsHeaders(nullOrigin)['access-control-allow-origin']).toBe('*');
    // No Origin, no cross-origin request: nothing to allow.
    expect(served(noOrigin).path).toBe('/api/items');
    expect(corsHeaders(noOrigin)).toEqual({});
  });

  it('allows only the cors-allow-origin origins: another Origin gets no CORS headers, its preflight the backend', async () => {
    const preflightOf = (origin: string) =>
      ask('corslist.example.com', '/x', {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
    const [listed, listedGet, ported, unlisted, unlistedGet, lookalike, suffix, nullGet] =
      await Promise.all([
        preflightOf('https://app.example.com'),
        ask('corslist.example.com', '/x', { headers: { origin: 'https://app.example.com' } }),
        ask('corslist.example.com', '/y', {
          headers: { origin: 'https://admin.example.com:8443' },
        }),
        preflightOf('https://evil.example.net'),
        ask('corslist.example.com', '/x', { headers: { origin: 'https://evil.example.net' } }),
        preflightOf('https://app.example.com.evil.example.net'),
        // The same host over another scheme or port is another origin.
        ask('corslist.example.com', '/x', { headers: { origin: 'http://app.example.com' } }),
        ask('corslist.example.com', '/x', { headers: { origin: 'null' } }),
      ]);
    expect(listed.status).toBe(204);
    expect(corsHeaders(listed)).toEqual({
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'X-Custom, Authorization',
      'access-control-max-age': '600',
    });
    expect(varyOf(listed)).toContain('origin');
    expect(served(listedGet).path).toBe('/x');
    expect(corsHeaders(listedGet)).toEqual({
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': 'X-Trace, X-Total',
    });
    expect(served(ported).path).toBe('/y');
    expect(corsHeaders(ported)['access-control-allow-origin']).toBe(
      'https://admin.example.com:8443',
    );
    for (const refused of [unlisted, lookalike]) {
      expect(served(refused)).toMatchObject({ method: 'OPTIONS', path: '/x' });
      expect(corsHeaders(refused)).toEqual({});
    }
    for (const refused of [unlistedGet, suffix, nullGet]) {
      expect(served(refused).method).toBe('GET');
      expect(corsHeaders(refused)).toEqual({});
    }
  });

  it('answers "*" without credentials when cors-allow-credentials is "false"', async () => {
    const origin = 'https://anywhere.example.org';
    const [preflight, get] = await Promise.all([
      ask('corsany.example.com', '/', {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'DELETE' },
      }),
      ask('corsany.example.com', '/', { headers: { origin } }),
    ]);
    expect(preflight.status).toBe(204);
    expect(corsHeaders(preflight)).toEqual({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, PUT, POST, DELETE, PATCH, OPTIONS',
      'access-control-allow-headers':
        'DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, Range, Authorization',
      'access-control-max-age': '1728000',
    });
    expect(served(get).path).toBe('/');
    expect(corsHeaders(get)).toEqual({ 'access-control-allow-origin': '*' });
  });

  it('keeps a client on its server with affinity: cookie (INGRESSCOOKIE, Path=/, HttpOnly)', async () => {
    const rendered_ = rendered.get('haproxy.cfg')?.toString() ?? '';
    expect(rendered_).toContain('  cookie INGRESSCOOKIE insert indirect nocache httponly\n');
    const first = await ask('sticky.example.com', '/s');
    const cookie = setCookieOf(first, 'INGRESSCOOKIE');
    // HAProxy writes path=/ itself (and the template no second Path=/).
    expect(cookie.attributes).toEqual(['path=/', 'HttpOnly']);
    const home = served(first).service;
    expect(['pair-1', 'pair-2']).toContain(home);
    // With the cookie: always its server, and the cookie is not set again.
    const kept = await sequence(20, () =>
      ask('sticky.example.com', '/s', { headers: { cookie: `INGRESSCOOKIE=${cookie.value}` } }),
    );
    expect(kept.map((answer) => served(answer).service)).toEqual(Array(20).fill(home));
    expect(kept.map((answer) => answer.headers['set-cookie'])).toEqual(Array(20).fill(undefined));
    // Without it: both servers, each answer setting the cookie of the server it came from.
    const fresh = await sequence(20, () => ask('sticky.example.com', '/s'));
    const cookieOf = new Map<string, Set<string>>();
    for (const answer of fresh) {
      const service = served(answer).service;
      const values = cookieOf.get(service) ?? new Set();
      values.add(setCookieOf(answer, 'INGRESSCOOKIE').value);
      cookieOf.set(service, values);
    }
    expect([...cookieOf.keys()].sort()).toEqual(['pair-1', 'pair-2']);
    expect([...cookieOf.values()].map((values) => values.size)).toEqual([1, 1]);
    expect(cookieOf.get(home)).toEqual(new Set([cookie.value]));
    // A cookie naming a spare (disabled) slot or no slot: balanced, and given a usable cookie.
    const spare = /\n {2}server (\S+) 127\.0\.0\.1:1 .*disabled\n/.exec(
      backendSection(rendered_, 'sticky'),
    )?.[1];
    expect(spare).toBeDefined();
    for (const value of [spare ?? '', 'bogus']) {
      const answer = await ask('sticky.example.com', '/s', {
        headers: { cookie: `INGRESSCOOKIE=${value}` },
      });
      const service = served(answer).service;
      expect(cookieOf.get(service)).toEqual(new Set([setCookieOf(answer, 'INGRESSCOOKIE').value]));
    }
  });

  it('writes session-cookie-name, -max-age, -path and -samesite into the affinity cookie', async () => {
    const first = await ask('stickyattrs.example.com', '/app/x');
    expect(['pair-1', 'pair-2']).toContain(served(first).service);
    const cookie = setCookieOf(first, 'route');
    // After HAProxy's own path=/: a user agent takes the last Path (RFC 6265 5.3, step 7).
    expect(cookie.attributes).toEqual([
      'path=/',
      'HttpOnly',
      'Path=/app',
      'Max-Age=3600',
      'SameSite=Strict',
    ]);
    expect(first.headers['set-cookie']?.join()).not.toContain('INGRESSCOOKIE');
    const kept = await sequence(10, () =>
      ask('stickyattrs.example.com', '/app/y', { headers: { cookie: `route=${cookie.value}` } }),
    );
    expect(new Set(kept.map((answer) => served(answer).service))).toEqual(
      new Set([served(first).service]),
    );
  });

  it('balances ewma as leastconn: a server busy with a slow request is passed over', async () => {
    const cfg = rendered.get('haproxy.cfg')?.toString() ?? '';
    expect(backendSection(cfg, 'ewma')).toContain('\n  balance leastconn\n');
    expect(backendSection(cfg, 'roundrobin')).toContain('\n  balance roundrobin\n');
    const [one, two] = [echoNamed('pair-1'), echoNamed('pair-2')];
    const idle = () => one.inFlight() + two.inFlight() === 0;
    await eventually(
      'the pair is idle',
      () => Promise.resolve(idle()),
      (yes) => yes,
      10_000,
    );
    const slow = ask('ewma.example.com', '/slow?ms=2000');
    // Awaited below; handled now, so an earlier failure leaves no unhandled rejection behind.
    slow.catch(() => undefined);
    await eventually(
      'the slow request reached a server',
      () => Promise.resolve(one.inFlight() + two.inFlight()),
      (count) => count === 1,
      10_000,
    );
    const busy = one.inFlight() === 1 ? 'pair-1' : 'pair-2';
    const quick = await sequence(6, () => ask('ewma.example.com', '/q'));
    const roundRobin = await sequence(6, () => ask('roundrobin.example.com', '/q'));
    expect(served(await slow).service).toBe(busy);
    expect(quick.map((answer) => served(answer).service)).toEqual(
      Array(6).fill(busy === 'pair-1' ? 'pair-2' : 'pair-1'),
    );
    // Round robin, the same moment, takes the busy server in turn.
    expect(new Set(roundRobin.map((answer) => served(answer).service))).toEqual(
      new Set(['pair-1', 'pair-2']),
    );
  });

  it('hashes by a header with upstream-hash-by $http_x_user: one value one server, values spread', async () => {
    const cfg = rendered.get('haproxy.cfg')?.toString() ?? '';
    expect(backendSection(cfg, 'hashhdr')).toContain('\n  balance hdr(x-user)\n');
    const alice = await sequence(20, () =>
      ask('hashhdr.example.com', '/h', { headers: { 'x-user': 'alice' } }),
    );
    expect(new Set(alice.map((answer) => served(answer).service)).size).toBe(1);
    const users = Array.from({ length: 16 }, (_, index) => `user-${String(index)}`);
    const serverOf = async (user: string) =>
      served(await ask('hashhdr.example.com', '/h', { headers: { 'x-user': user } })).service;
    const once = await Promise.all(users.map(serverOf));
    const again = await Promise.all(users.map(serverOf));
    expect(again).toEqual(once);
    expect(new Set(once)).toEqual(new Set(['pair-1', 'pair-2']));
  });

  it('hashes by client address with upstream-hash-by $remote_addr', async () => {
    const cfg = rendered.get('haproxy.cfg')?.toString() ?? '';
    expect(backendSection(cfg, 'hashsrc')).toContain('\n  balance source\n');
    const addresses = Array.from({ length: 8 }, (_, index) => `127.0.38.${String(40 + index)}`);
    const serversOf = async (from: string) =>
      new Set(
        (await sequence(5, () => ask('hashsrc.example.com', '/r', { from }))).map(
          (answer) => served(answer).service,
        ),
      );
    const perAddress = await Promise.all(addresses.map(serversOf));
    // Each address always its one server; the addresses over both.
    expect(perAddress.map((set) => set.size)).toEqual(Array(8).fill(1));
    expect(new Set(perAddress.flatMap((set) => [...set]))).toEqual(new Set(['pair-1', 'pair-2']));
  });

  it('hashes by a cookie ($cookie_session) and by the URI ($request_uri)', async () => {
    const cfg = rendered.get('haproxy.cfg')?.toString() ?? '';
    expect(backendSection(cfg, 'hashcookie')).toContain('\n  balance hash req.cook(session)\n');
    expect(backendSection(cfg, 'hashuri')).toContain('\n  balance uri\n');
    const keys = Array.from({ length: 16 }, (_, index) => `k${String(index)}`);
    const byCookie = (key: string) =>
      ask('hashcookie.example.com', '/c', { headers: { cookie: `other=1; session=${key}` } });
    const byUri = (key: string) => ask('hashuri.example.com', `/u/${key}`);
    for (const send of [byCookie, byUri]) {
      const once = (await Promise.all(keys.map(send))).map((answer) => served(answer).service);
      const again = (await Promise.all(keys.map(send))).map((answer) => served(answer).service);
      expect(again).toEqual(once);
      expect(new Set(once)).toEqual(new Set(['pair-1', 'pair-2']));
    }
  });

  it('answers 503 over limit-rps to that client address only', async () => {
    const burst = await Promise.all(
      Array.from({ length: 20 }, () => ask('rps.example.com', '/b', { from: rpsClient })),
    );
    const other = await ask('rps.example.com', '/b', { from: rpsOther });
    const statuses = burst.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    // 5 a second: of 20 at once, about 5 served, the rest refused (margins for a slow host).
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThanOrEqual(10);
    const refused = burst.find((answer) => answer.status === 503);
    expect(refused?.body).toBe(rpsBody);
    expect(served(other).path).toBe('/b');
  });

  it('serves limit-rps requests a second to a client that keeps asking for more', async () => {
    // 10 a second for 3 s: ingress-nginx accepts 5 of them each second and refuses the rest;
    // counting the refused requests too would keep the client over the limit, served never again.
    const sent: Promise<Answer>[] = [];
    for (let i = 0; i < 30; i++) {
      sent.push(ask('rps.example.com', '/steady', { from: rpsSteady }));
      await sleep(100);
    }
    const statuses = (await Promise.all(sent)).map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    const servedCount = statuses.filter((status) => status === 200).length;
    // About 15 (5 a second); 5 if only the first second were served, 30 without a limit.
    expect(servedCount, statuses.join()).toBeGreaterThanOrEqual(10);
    expect(servedCount, statuses.join()).toBeLessThanOrEqual(22);
    // Still served after its first second.
    expect(statuses.slice(15).filter((status) => status === 200).length).toBeGreaterThanOrEqual(3);
  });

  it('answers 503 over limit-connections to that client address only, while its requests last', async () => {
    const limited = echoNamed('limited');
    const slow = [0, 1].map(() => ask('conns.example.com', '/slow?ms=2000', { from: connsClient }));
    // Awaited below; handled now, so an earlier failure leaves no unhandled rejection behind.
    for (const request of slow) request.catch(() => undefined);
    await eventually(
      'two slow requests reached the backend',
      () => Promise.resolve(limited.inFlight()),
      (count) => count === 2,
      10_000,
    );
    const [third, fourth, other] = await Promise.all([
      ask('conns.example.com', '/slow?ms=2000', { from: connsClient }),
      ask('conns.example.com', '/q', { from: connsClient }),
      ask('conns.example.com', '/q', { from: connsOther }),
    ]);
    expect([third.status, fourth.status]).toEqual([503, 503]);
    expect(third.body).toBe(connsBody);
    expect(served(other).path).toBe('/q');
    expect((await Promise.all(slow)).map((answer) => served(answer).path)).toEqual([
      '/slow?ms=2000',
      '/slow?ms=2000',
    ]);
    // Its requests over, the address is served again.
    expect(served(await ask('conns.example.com', '/q', { from: connsClient })).path).toBe('/q');
  });

  it("sets HSTS on HAProxy's own HTTPS answers of a TLS host: 403, 302, 413 and 504", async () => {
    const [forbidden, appRoot, app, timeout, tooLarge, plainForbidden] = await Promise.all([
      ask('hstsallow.example.com', '/', { tls: true }),
      ask('hstsown.example.com', '/', { tls: true }),
      ask('hstsown.example.com', '/start', { tls: true }),
      ask('hstsown.example.com', '/slow?ms=2500', { tls: true }),
      headOf('hstsown.example.com', 2 * 1024 * 1024, { tls: true }),
      ask('hstsallow.example.com', '/'),
    ]);
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers['strict-transport-security']).toBe(hsts);
    expect(appRoot.status).toBe(302);
    expect(appRoot.headers.location).toBe('/start');
    expect(appRoot.headers['strict-transport-security']).toBe(hsts);
    expect(served(app).path).toBe('/start');
    expect(app.headers['strict-transport-security']).toBe(hsts);
    expect(timeout.status).toBe(504);
    expect(timeout.headers['strict-transport-security']).toBe(hsts);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers.get('strict-transport-security')).toBe(hsts);
    // Over HTTP: redirected to HTTPS before the allow-list, and no HSTS.
    expect(plainForbidden.status).toBe(308);
    expect(plainForbidden.headers['strict-transport-security']).toBeUndefined();
  });

  it('leaves out an Ingress with a bad value, a snippet or auth-*, serving the others', async () => {
    const [bad, good, snippet, auth, badAllow] = await Promise.all([
      ask('bad.example.com', '/'),
      ask('good.example.com', '/g'),
      ask('snippet.example.com', '/'),
      ask('auth.example.com', '/'),
      ask('badallow.example.com', '/'),
    ]);
    for (const answer of [bad, snippet, auth, badAllow]) {
      expect({ status: answer.status, body: answer.body }).toEqual(notFound);
    }
    expect(served(good).path).toBe('/g');
    for (const host of ['bad', 'snippet', 'auth', 'badallow']) {
      for (const map of ['exact', 'prefix', 'regex']) {
        expect(rendered.get(`maps/${map}.map`)?.toString()).not.toContain(`${host}.example.com`);
      }
    }
    expect(model.excluded).toEqual([]);
    expect(warningsOf('bad')).toEqual([
      'AnnotationInvalid: Ingress shop/bad has metadata.annotations["nginx.ingress.kubernetes.io/proxy-body-size"] "huge", which is not bytes with an optional k, m or g ("1m", "512k", "0" for no limit). Its routes are left out until the value is fixed.',
    ]);
    const [badAllowWarning, ...moreBadAllow] = warningsOf('badallow');
    expect(moreBadAllow).toEqual([]);
    expect(badAllowWarning).toMatch(
      /^AnnotationInvalid: .*whitelist-source-range"\] "10\.0\.0\.0\/33", which is not a comma-separated list of IP addresses or CIDR ranges/,
    );
    const [snippetWarning, ...moreSnippet] = warningsOf('snippet');
    expect(moreSnippet).toEqual([]);
    expect(snippetWarning).toContain(
      'AnnotationRefused: Ingress shop/snippet has the annotation nginx.ingress.kubernetes.io/configuration-snippet, which is refused',
    );
    const [authWarning, ...moreAuth] = warningsOf('auth');
    expect(moreAuth).toEqual([]);
    expect(authWarning).toContain(
      'AnnotationRefused: Ingress shop/auth has the annotation nginx.ingress.kubernetes.io/auth-url, which is refused',
    );
    expect(warningsOf('good')).toEqual([]);
    expect(warningsOf('plain')).toEqual([]);
  });
});
