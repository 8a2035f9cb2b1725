/**
 * The chart's default template served by real HAProxy, for tests that ask it with real
 * requests (annotations-served.test.ts, host-header-routing.test.ts): a cluster snapshot of
 * Ingresses in namespace `shop` and their Services, rendered as the controller renders it
 * (model, templates, bundle; the chart's template config as bench/controller-fixture.ts reads
 * it), written into a directory and checked with `haproxy -c`, then HAProxy started on it.
 *
 * The model refuses loopback endpoints (as it should), so the Services' endpoints are 10.0.0.x
 * addresses on port 8080, and only the rendered `server` lines are pointed at the test's
 * loopback backends (`pointServers`) before HAProxy starts; the frontend, maps and crt-list
 * are served as rendered. HAProxy binds the template's fixed ports 8080 and 8443 on the
 * test's own loopback address (HAPTIC_LISTEN_ADDRESS), so test files run side by side.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { dirname, join } from 'node:path';
import { defaultTemplateConfig, tlsData } from '../../bench/controller-fixture.ts';
import { type SupervisedProcess, startSupervised } from '../../dev/lib/supervised-process.ts';
import { readTemplateConfig } from '../../src/api/template-config.ts';
import { assembleBundle, requestModel } from '../../src/controller/render/render-bundle.ts';
import {
  createTemplateEngine,
  parseTemplates,
  renderTemplates,
  templateContext,
} from '../../src/controller/render/template-engine.ts';
import type {
  ClusterSnapshot,
  EndpointSliceView,
  ServiceView,
} from '../../src/controller/routing/cluster-snapshot.ts';
import type { ModelResult } from '../../src/controller/routing/model-types.ts';
import { anyRangeEndpointRules } from '../../src/validation/endpoint-addresses.ts';
import type { IngressView } from '../../src/validation/ingress-view.ts';
import { eventually } from './eventually.ts';

/**
 * A snapshot of `ingresses` (namespace `shop`) and the Services `endpoints` names, each with
 * port 80 (`http`) served on port 8080 of its endpoint addresses (one EndpointSlice, all
 * ready), in the order given; Secret shop/tls holds a self-signed certificate for `tlsHost`.
 */
export async function shopSnapshot(
  ingresses: readonly IngressView[],
  endpoints: Readonly<Record<string, readonly string[]>>,
  tlsHost: string,
): Promise<ClusterSnapshot> {
  const services = new Map<string, ServiceView>();
  const slices = new Map<string, EndpointSliceView[]>();
  for (const [name, addresses] of Object.entries(endpoints)) {
    services.set(`shop/${name}`, { namespace: 'shop', name, ports: [{ name: 'http', port: 80 }] });
    slices.set(`shop/${name}`, [
      {
        namespace: 'shop',
        name: `${name}-1`,
        serviceName: name,
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080 }],
        endpoints: addresses.map((address) => ({ addresses: [address], ready: true })),
      },
    ]);
  }
  return {
    ingresses,
    services,
    endpointSlices: slices,
    secrets: new Map([
      ['shop/tls', { namespace: 'shop', name: 'tls', data: await tlsData(tlsHost) }],
    ]),
    fqdnNames: new Map(),
    endpointRules: anyRangeEndpointRules,
  };
}

export interface RenderedTemplate {
  /** Every file of the bundle by its path (haproxy.cfg, maps/…, the certificates). */
  readonly files: ReadonlyMap<string, Buffer>;
  readonly model: ModelResult;
}

/** The controller's render of the chart's default template for `snapshot` (model, templates, bundle). */
export function renderDefaultTemplate(snapshot: ClusterSnapshot): RenderedTemplate {
  const engine = createTemplateEngine();
  const config = readTemplateConfig(defaultTemplateConfig());
  if ('message' in config) throw new Error(config.message);
  const parsed = parseTemplates(engine, config);
  if ('message' in parsed) throw new Error(parsed.message);
  const model = requestModel({ snapshot, ingressClass: 'haptic', now: new Date() });
  const output = renderTemplates(engine, parsed, templateContext(model.model, 'haptic'));
  if (!output.ok) throw new Error(output.message);
  const bundle = assembleBundle(model, output.files);
  if (!bundle.ok) throw new Error(bundle.message);
  const files = new Map(bundle.files.map((file) => [file.path, Buffer.from(file.content)]));
  return { files, model: bundle.model };
}

/** HAProxy's environment: PATH, and the address the template binds. */
function haproxyEnv(address: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HAPTIC_LISTEN_ADDRESS: address };
}

/**
 * Writes `files` into `dir` (subdirectories as their paths say) and has `haproxy -c` accept
 * haproxy.cfg bound to `address` (throws if it does not); returns haproxy.cfg's path.
 */
function writeChecked(dir: string, files: ReadonlyMap<string, Buffer>, address: string): string {
  for (const [file, content] of files) {
    const target = join(dir, file);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  const cfg = join(dir, 'haproxy.cfg');
  execFileSync('haproxy', ['-c', '-q', '-f', cfg], { env: haproxyEnv(address) });
  return cfg;
}

/**
 * Points every `server` line of `cfg` at an endpoint `10.0.0.x:8080` (options after it kept)
 * to `127.0.0.1:<port>` of that endpoint in `ports`; throws for an endpoint without one.
 * Returns how many lines it rewrote.
 */
function pointServers(cfg: string, ports: ReadonlyMap<string, number>): number {
  const servers = /^( {2}server \S+ )(10\.0\.0\.\d+:8080)(?= |$)/gm;
  let rewritten = 0;
  const text = readFileSync(cfg, 'utf8').replace(
    servers,
    (_line, head: string, endpoint: string) => {
      const port = ports.get(endpoint);
      if (port === undefined) throw new Error(`no backend for ${endpoint}`);
      rewritten += 1;
      return `${head}127.0.0.1:${String(port)}`;
    },
  );
  writeFileSync(cfg, text);
  return rewritten;
}

async function listens(address: string, port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = netConnect(port, address, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => {
      resolve(false);
    });
  });
}

/**
 * Starts HAProxy (`name`, supervised) on `cfg` bound to `address`, logging into `logFile`,
 * and waits until it listens on 8080 and 8443; otherwise stops it and throws with its log.
 */
async function startHAProxy(options: {
  readonly name: string;
  readonly cfg: string;
  readonly address: string;
  readonly logFile: string;
}): Promise<SupervisedProcess> {
  const haproxy = startSupervised({
    name: options.name,
    command: 'haproxy',
    args: ['-db', '-f', options.cfg],
    logFile: options.logFile,
    env: haproxyEnv(options.address),
  });
  try {
    for (const port of [8080, 8443]) {
      await eventually(
        `HAProxy listens on ${String(port)}`,
        () => listens(options.address, port),
        (listening) => listening,
        20_000,
      );
    }
  } catch {
    const log = readFileSync(options.logFile, 'utf8');
    await haproxy.stop();
    throw new Error(`HAProxy did not listen:\n${log}`);
  }
  return haproxy;
}

export interface ServeOptions {
  /** The supervised HAProxy's name. */
  readonly name: string;
  /** The test's own directory: the files go into `config/`, HAProxy's log is `haproxy.log`. */
  readonly root: string;
  /** The test's own loopback address, which HAProxy binds. */
  readonly address: string;
  /** The rendered files (`renderDefaultTemplate`). */
  readonly files: ReadonlyMap<string, Buffer>;
  /**
   * Starts the test's backends, once `haproxy -c` has accepted the files: the port on
   * 127.0.0.1 of each endpoint, by its rendered `10.0.0.x:8080`.
   */
  readonly backends: () => Promise<ReadonlyMap<string, number>>;
  /** Told how many `server` lines were pointed at the backends, before HAProxy starts. */
  readonly servers: (pointed: number) => void;
}

/**
 * Serves `files` with real HAProxy: written into `root`/config and checked (`haproxy -c`),
 * the test's backends started, the `server` lines pointed at them, then HAProxy started and
 * listening on 8080 and 8443 of `address`. The caller stops it.
 */
export async function serveRendered(options: ServeOptions): Promise<SupervisedProcess> {
  const cfg = writeChecked(join(options.root, 'config'), options.files, options.address);
  options.servers(pointServers(cfg, await options.backends()));
  return startHAProxy({
    name: options.name,
    cfg,
    address: options.address,
    logFile: join(options.root, 'haproxy.log'),
  });
}
