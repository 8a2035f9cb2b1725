/**
 * How to reach the Kubernetes API: its URL and the TLS options and headers of every request,
 * as node:https takes them. Two sources give the same answer:
 *
 * - `loadKubeAccess` reads the common forms itself (a ServiceAccount in a Pod; one kubeconfig
 *   file whose current user has a token or a client certificate, over https), without loading
 *   @kubernetes/client-node: a short command such as `haptic preflight` then starts in a fraction
 *   of the time. For every other form (exec plugins, auth providers, proxies, several KUBECONFIG
 *   files, basic auth, plain http, anything it does not recognise or cannot read) it answers
 *   `undefined`, and the caller uses the full client's configuration instead.
 * - `kubeAccessOf` asks a loaded `KubeConfig` (`applyToHTTPSOptions`, per request, so exec
 *   credentials refresh as they do in the client's own requests).
 *
 * The rules `loadKubeAccess` follows are the full client's, so both sources agree: the sources
 * in `loadKubeConfig`'s order; relative file paths against the kubeconfig's directory; a file
 * wins over inline data; `insecure-skip-tls-verify: true` turns verification off, and otherwise
 * it is left to Node (which honours NODE_TLS_REJECT_UNAUTHORIZED, as the client does);
 * `tls-server-name` is the name verified; a token is sent as `Authorization: Bearer`.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { OutgoingHttpHeaders } from 'node:http';
import type { RequestOptions } from 'node:https';
import { isIPv6 } from 'node:net';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { load } from 'js-yaml';
import { HapticError, errorCodes } from '../errors.ts';
import { kubeConfigSource, serviceAccountDir } from './config-source.ts';
import { isRecord } from '../is-record.ts';

/** One request's options: TLS options, headers and agent are filled by `KubeAccess.apply`. */
export type KubeRequest = RequestOptions & { headers: OutgoingHttpHeaders };

export interface KubeAccess {
  /** The API server, for example `https://10.96.0.1:443`. */
  readonly server: string;
  /** Fills the TLS options, headers and agent of one request. */
  readonly apply: (request: KubeRequest) => Promise<void>;
  /**
   * The TLS options `apply` gives every request, when they are fixed and no agent is needed
   * (`loadKubeAccess`'s forms): the requests may then share one HTTP/2 connection. Absent for
   * the full client's configuration, which fills each request itself (proxies, exec plugins).
   */
  readonly tls?: TlsOptions;
}

/** TLS options read from a kubeconfig or a ServiceAccount. */
export type TlsOptions = Pick<
  RequestOptions,
  'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'
>;

type Entry = Readonly<Record<string, unknown>>;

/** The keys of the current cluster and user this reader understands; others need the full client. */
const clusterKeys = new Set([
  'server',
  'certificate-authority',
  'certificate-authority-data',
  'insecure-skip-tls-verify',
  'tls-server-name',
]);
const userKeys = new Set([
  'token',
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
]);

/** The named entries of a kubeconfig list, or undefined when one lacks what the client requires. */
function named(
  list: unknown,
  inner: string,
  required: readonly string[],
): Map<string, Entry> | undefined {
  if (list === undefined || list === null) return new Map();
  if (!Array.isArray(list)) return undefined;
  const found = new Map<string, Entry>();
  for (const item of list as unknown[]) {
    if (!isRecord(item) || typeof item.name !== 'string' || item.name === '') return undefined;
    const body = item[inner];
    if (inner !== 'user' && !isRecord(body)) return undefined;
    const fields = isRecord(body) ? body : {};
    if (required.some((key) => typeof fields[key] !== 'string' || fields[key] === '')) {
      return undefined;
    }
    if (!found.has(item.name)) found.set(item.name, fields);
  }
  return found;
}

function stringsOnly(
  entry: Entry,
  allowed: ReadonlySet<string>,
  booleans: readonly string[],
): boolean {
  return Object.entries(entry).every(
    ([key, value]) =>
      allowed.has(key) &&
      (booleans.includes(key) ? typeof value === 'boolean' : typeof value === 'string'),
  );
}

/** The bytes of a `<name>` file (relative to `dir`) or of `<name>-data` (base64); the file wins. */
function material(entry: Entry, name: string, dir: string): Buffer | undefined {
  const file = entry[name];
  if (typeof file === 'string' && file !== '') {
    return readFileSync(isAbsolute(file) ? file : join(dir, file));
  }
  const data = entry[`${name}-data`];
  return typeof data === 'string' && data !== '' ? Buffer.from(data, 'base64') : undefined;
}

function fixed(server: string, tls: TlsOptions, token: string | undefined): KubeAccess {
  return {
    server,
    tls,
    apply: (request) => {
      Object.assign(request, tls);
      if (token !== undefined) request.headers.Authorization = `Bearer ${token}`;
      return Promise.resolve();
    },
  };
}

/** Access from one kubeconfig file, or undefined when it needs the full client. */
function fromFile(path: string): KubeAccess | undefined {
  let document: unknown;
  try {
    // As the full client reads it: js-yaml's `load` with its default schema.
    document = load(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(document)) return undefined;
  const clusters = named(document.clusters, 'cluster', ['server']);
  const contexts = named(document.contexts, 'context', ['cluster']);
  const users = named(document.users, 'user', []);
  const current = document['current-context'];
  if (clusters === undefined || contexts === undefined || users === undefined) return undefined;
  if (typeof current !== 'string') return undefined;
  const context = contexts.get(current);
  const cluster = clusters.get(String(context?.cluster));
  const user = users.get(String(context?.user));
  if (context === undefined || cluster === undefined || user === undefined) return undefined;
  if (!stringsOnly(cluster, clusterKeys, ['insecure-skip-tls-verify'])) return undefined;
  if (!stringsOnly(user, userKeys, [])) return undefined;
  const server = String(cluster.server);
  if (!server.startsWith('https://')) return undefined;
  const dir = dirname(path);
  try {
    const tls: TlsOptions = {};
    const ca = material(cluster, 'certificate-authority', dir);
    const cert = material(user, 'client-certificate', dir);
    const key = material(user, 'client-key', dir);
    if (ca !== undefined) tls.ca = ca;
    if (cert !== undefined) tls.cert = cert;
    if (key !== undefined) tls.key = key;
    if (cluster['insecure-skip-tls-verify'] === true) tls.rejectUnauthorized = false;
    const servername = cluster['tls-server-name'];
    if (typeof servername === 'string' && servername !== '') tls.servername = servername;
    const token = user.token;
    return fixed(server, tls, typeof token === 'string' && token !== '' ? token : undefined);
  } catch {
    // A file that cannot be read: the full client reports it in its own words.
    return undefined;
  }
}

/**
 * Access as the Pod's ServiceAccount mounted at `dir`, or undefined when it needs the full
 * client.
 */
export function serviceAccountAccess(dir = serviceAccountDir): KubeAccess | undefined {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  // Ports the client treats as plain http, and a Pod without the service variables.
  if (host === undefined || port === undefined || ['80', '8080', '8001'].includes(port)) {
    return undefined;
  }
  const server = `https://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  const tokenFile = join(dir, 'token');
  let tls: TlsOptions;
  try {
    tls = { ca: readFileSync(join(dir, 'ca.crt')) };
  } catch {
    return undefined;
  }
  return {
    server,
    tls,
    // The kubelet replaces the projected token before it expires (about hourly): a long-running
    // reader (`haptic webhook`) reads it for every request, as the full client does.
    apply: async (request) => {
      Object.assign(request, tls);
      const token = (await readFile(tokenFile, 'utf8')).trim();
      if (token !== '') request.headers.Authorization = `Bearer ${token}`;
    },
  };
}

/**
 * Access in `loadKubeConfig`'s order (`path`, KUBECONFIG, ~/.kube/config, the Pod's
 * ServiceAccount), read without the full client; undefined when the source found needs it (or
 * there is none: the full client then says what is missing).
 */
export function loadKubeAccess(path?: string): KubeAccess | undefined {
  const source = kubeConfigSource(path);
  switch (source.kind) {
    case 'flag':
    case 'user':
      return fromFile(source.path);
    case 'env': {
      const files = source.value.split(delimiter).filter((file) => file !== '');
      const [only] = files;
      return files.length === 1 && only !== undefined ? fromFile(only) : undefined;
    }
    case 'service-account':
      return serviceAccountAccess();
    case 'none':
      return undefined;
  }
}

/** Access through a loaded client configuration (its current context). */
export function kubeAccessOf(kc: KubeConfig): KubeAccess {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) {
    throw new HapticError(
      errorCodes.KUBE_CONFIG_MISSING,
      'The Kubernetes client configuration has no current cluster; set current-context.',
    );
  }
  return { server: cluster.server, apply: (options) => kc.applyToHTTPSOptions(options) };
}
