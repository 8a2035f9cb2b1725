/**
 * The chart's default template routes on one key, host + path, looked up in the maps the
 * controller writes (`shop.example.com/checkout/` for a Prefix path /checkout). A Host header
 * holding a "/" moved the boundary: `Host: shop.example.com/checkout` with path /internal made
 * the key `shop.example.com/checkout/internal` and reached the backend published only under
 * /checkout, with a path it never serves. Here the template is rendered as the controller
 * renders it (model, templates, lint, `haproxy -c`), served by real HAProxy, and asked with
 * raw HTTP/1.1 bytes and HTTP/2 over TLS: every Host that is not one host[:port] gets the
 * template's 400 before any map lookup, while real hosts (any case, a port, a trailing dot, an
 * IPv4 address or IPv6 literal) keep their routes.
 *
 * The model refuses loopback endpoints (as it should), so the Services' endpoints are 10.0.0.x
 * addresses and only the rendered `server` lines are pointed at this test's loopback backends
 * before HAProxy starts; the frontend, maps and crt-list are served as rendered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SupervisedProcess } from '../../../dev/lib/supervised-process.ts';
import type { ClusterSnapshot } from '../../../src/controller/routing/cluster-snapshot.ts';
import { inspectConfigFiles } from '../../../src/haproxy/files-lint.ts';
import { type IngressView, readIngress } from '../../../src/validation/ingress-view.ts';
import {
  renderDefaultTemplate,
  serveRendered,
  shopSnapshot,
} from '../../support/served-template.ts';

/** This file's own loopback address: HAProxy binds the template's fixed ports 8080 and 8443. */
const address = '127.0.37.1';
const root = mkdtempSync(join(tmpdir(), 'haptic-host-header-'));
const services = ['checkout', 'exact', 'wild', 'public'] as const;
type ServiceName = (typeof services)[number];
const backends: Server[] = [];
let haproxy: SupervisedProcess | undefined;

function path(path: string, pathType: 'Prefix' | 'Exact', service: ServiceName) {
  return { path, pathType, backend: { service: { name: service, port: { number: 80 } } } };
}

function ingress(name: string, spec: Record<string, unknown>): IngressView {
  const view = readIngress({
    kind: 'Ingress',
    // Plain HTTP served on the TLS host too (no redirect), so both schemes reach the routes.
    metadata: {
      namespace: 'shop',
      name,
      annotations: { 'nginx.ingress.kubernetes.io/ssl-redirect': 'false' },
    },
    spec: { ingressClassName: 'haptic', ...spec },
  });
  if (typeof view === 'string') throw new Error(view);
  return view;
}

async function snapshot(): Promise<ClusterSnapshot> {
  const ingresses = [
    ingress('shop', {
      tls: [{ hosts: ['shop.example.com'], secretName: 'tls' }],
      rules: [
        {
          host: 'shop.example.com',
          http: {
            paths: [path('/checkout', 'Prefix', 'checkout'), path('/exact', 'Exact', 'exact')],
          },
        },
      ],
    }),
    ingress('wild', {
      rules: [{ host: '*.example.com', http: { paths: [path('/wild', 'Prefix', 'wild')] } }],
    }),
    ingress('public', { rules: [{ http: { paths: [path('/public', 'Prefix', 'public')] } }] }),
  ];
  const endpoints = Object.fromEntries(
    services.map((name, index) => [name, [`10.0.0.${String(index + 1)}`]]),
  );
  return shopSnapshot(ingresses, endpoints, 'shop.example.com');
}

/** A backend that answers `<service> <request target>`. */
async function startBackend(name: ServiceName): Promise<number> {
  const server = createServer((request, response) => {
    response.end(`${name} ${request.url ?? ''}`);
  });
  backends.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new Error('no port');
  return bound.port;
}

let rendered: ReadonlyMap<string, Buffer>;

beforeAll(async () => {
  rendered = renderDefaultTemplate(await snapshot()).files;
  haproxy = await serveRendered({
    name: 'haproxy host-header',
    root,
    address,
    files: rendered,
    // Only now, the endpoints become this test's backends.
    backends: async () => {
      const ports = new Map<string, number>();
      for (const [index, name] of services.entries()) {
        ports.set(`10.0.0.${String(index + 1)}:8080`, await startBackend(name));
      }
      return ports;
    },
    servers: (pointed) => {
      expect(pointed).toBe(services.length);
    },
  });
}, 60_000);

afterAll(async () => {
  await haproxy?.stop();
  for (const server of backends) server.close();
  rmSync(root, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** Sends `head` (request line and headers, without the blank line) as raw HTTP/1.x bytes. */
async function raw(head: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = netConnect(8080, address, () => {
      socket.end(`${head}\r\nConnection: close\r\n\r\n`);
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${head}`)));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      const at = text.indexOf('\r\n\r\n');
      resolve({ status, body: at === -1 ? '' : text.slice(at + 4) });
    });
  });
}

/** GET `target` over HTTP/1.1 with exactly these Host header lines. */
function get(target: string, ...hosts: string[]): Promise<Answer> {
  return raw([`GET ${target} HTTP/1.1`, ...hosts.map((host) => `Host: ${host}`)].join('\r\n'));
}

/** One HTTP/2 request over TLS (ALPN h2) with the given pseudo-headers and headers. */
async function h2(headers: Record<string, string>): Promise<Answer> {
  const session = http2Connect(`https://${address}:8443`, {
    rejectUnauthorized: false,
    servername: 'shop.example.com',
  });
  try {
    return await new Promise<Answer>((resolve, reject) => {
      session.on('error', reject);
      const stream = session.request({ ':method': 'GET', ...headers });
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on('response', (answer) => {
        status = Number(answer[':status']);
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        resolve({ status, body: Buffer.concat(chunks).toString() });
      });
      stream.on('error', reject);
      stream.end();
    });
  } finally {
    session.close();
  }
}

// The template's own refusal, or HAProxy 3.0's: it refuses many malformed Hosts while parsing.
const refused = {
  status: 400,
  body: expect.stringMatching(
    /^400 the Host header is not a host\[:port\]$|<h1>400 Bad request<\/h1>/,
  ) as unknown as string,
};

describe('the default template against forged Host headers', () => {
  it('renders a configuration the lint and haproxy -c accept', () => {
    const findings = inspectConfigFiles((file) => rendered.get(file)?.toString()).findings;
    expect(findings).toEqual([]);
    expect(rendered.get('maps/prefix.map')?.toString()).toContain(
      'shop.example.com/checkout/ shop:checkout:80',
    );
  });

  it('routes real hosts: any case, a port, a trailing dot, IP addresses to host-less rules', async () => {
    const answers = await Promise.all([
      get('/checkout/x', 'shop.example.com'),
      get('/checkout', 'SHOP.Example.COM:8080'),
      get('/checkout/y', 'shop.example.com.'),
      get('/checkout/z', 'shop.example.com.:80'),
      get('/exact', 'shop.example.com'),
      get('/internal', 'shop.example.com'),
      get('/wild/a', 'x.example.com'),
      get('/public', '[::1]:8080'),
      get('/public/p', '192.0.2.1'),
      get('/public', '[2001:DB8::1]'),
      get('http://shop.example.com/checkout/abs', 'shop.example.com'),
    ]);
    expect(answers).toEqual([
      { status: 200, body: 'checkout /checkout/x' },
      { status: 200, body: 'checkout /checkout' },
      { status: 200, body: 'checkout /checkout/y' },
      { status: 200, body: 'checkout /checkout/z' },
      { status: 200, body: 'exact /exact' },
      { status: 404, body: '404 no Ingress matches this host and path' },
      { status: 200, body: 'wild /wild/a' },
      { status: 200, body: 'public /public' },
      { status: 200, body: 'public /public/p' },
      { status: 200, body: 'public /public' },
      { status: 200, body: 'checkout http://shop.example.com/checkout/abs' },
    ]);
  });

  it.each([
    ['a "/" that makes the key shop.example.com/checkout/internal', 'shop.example.com/checkout'],
    ['a "/" through the wildcard step (*.example.com/wild/internal)', 'x.example.com/wild'],
    ['a comma list whose last value holds the "/"', 'a, shop.example.com/checkout'],
    ['a backslash', 'shop.example.com\\checkout'],
    ['a space', 'shop.example.com checkout'],
    ['an encoded "/"', 'shop.example.com%2Fcheckout'],
    ['a "#"', 'shop.example.com#checkout'],
    ['a "?"', 'shop.example.com?checkout'],
    ['a "*" (the host-less rules)', '*'],
    ['a wildcard name', '*.example.com'],
    ['a port that is not digits', 'shop.example.com:https'],
    ['two ports', 'shop.example.com:80:80'],
    ['an empty label', 'shop..example.com'],
    ['an unclosed IPv6 literal', '[::1'],
    ['user information', 'user@shop.example.com'],
    ['an empty value', ''],
  ])('answers 400 to a Host with %s', async (_what, host) => {
    expect(await get('/internal', host)).toEqual(refused);
  });

  it('answers 400 to a request without a Host header, in HTTP/1.1 and 1.0', async () => {
    expect(await raw('GET /public HTTP/1.1')).toEqual(refused);
    expect(await raw('GET /public HTTP/1.0')).toEqual(refused);
    expect(await raw('GET http://shop.example.com/checkout HTTP/1.1')).toEqual(refused);
  });

  it('leaves HAProxy its own 400 for two Host values and for an absolute URI naming another host', async () => {
    const two = await get('/internal', 'shop.example.com', 'shop.example.com/checkout');
    expect(two.status).toBe(400);
    expect(two.body).not.toContain('checkout');
    const absolute = await get('http://elsewhere.example/internal', 'shop.example.com/checkout');
    expect(absolute.status).toBe(400);
    expect(absolute.body).not.toContain('checkout');
  });

  it('reads the HTTP/2 :authority as the Host, and refuses a forged one', async () => {
    expect(await h2({ ':authority': 'shop.example.com', ':path': '/checkout/h2' })).toEqual({
      status: 200,
      body: 'checkout /checkout/h2',
    });
    // HAProxy 3.0 resets the stream of a malformed :authority, or of a host header that
    // disagrees with it, before any rule: refused as well, never routed by the forged value.
    const reset = { status: 'stream reset' };
    const h2OrReset = (headers: Parameters<typeof h2>[0]) =>
      h2(headers).catch((error: unknown) => {
        if (String(error).includes('NGHTTP2_PROTOCOL_ERROR')) return reset;
        throw error;
      });
    expect([refused, reset]).toContainEqual(
      await h2OrReset({ ':authority': 'shop.example.com/checkout', ':path': '/internal' }),
    );
    // HAProxy 2.6 replaced a host header by the :authority, so a forged host header is not read.
    expect([{ status: 200, body: 'exact /exact' }, reset]).toContainEqual(
      await h2OrReset({ ':authority': 'shop.example.com', ':path': '/exact', host: 'x/checkout' }),
    );
    expect([refused, reset]).toContainEqual(
      await h2OrReset({ ':authority': 'x.example.com/wild', ':path': '/internal' }),
    );
  });
});
