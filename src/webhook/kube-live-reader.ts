/**
 * Live reads for the validator through the Kubernetes API: the Secrets a release names (the
 * issuer Secret as metadata only) and the identity Secrets its running Deployments mount.
 * Read-only; a missing object is `undefined`.
 *
 * GETs over node:https (or node:http for a plain-http cluster the configuration allows),
 * with the TLS options and credentials of a `KubeAccess`: `haptic preflight` then never loads
 * @kubernetes/client-node when its configuration is a common one (see `loadKubeAccess`), and a
 * loaded `KubeConfig` (controller, exec plugins, proxies) gives the same requests through
 * `applyToHTTPSOptions`. A short command's reader (`multiplexed`) sends them over one HTTP/2
 * connection when the access's TLS options are fixed (src/kube/http2-reads.ts).
 */
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { HapticError, errorCodes } from '../errors.ts';
import {
  type KubeAccess,
  type KubeRequest,
  type TlsOptions,
  kubeAccessOf,
} from '../kube/kube-access.ts';
import { Http2Reads, Http2Unsupported, type ReadAnswer } from '../kube/http2-reads.ts';
import { kubeStatusError, kubeUnreachableError } from '../kube/status-error.ts';
import type { SecretObject } from '../validation/index.ts';
import type { LiveReader } from './release-io.ts';
import { isRecord } from '../is-record.ts';

// Not `import … from 'node:http'`: a module import reads every export, and its WebSocket
// getters load Node's bundled undici (about 45 ms of preflight's start-up).
const { request: httpRequest } = process.getBuiltinModule('node:http');

/** Asks the API server for an object's metadata only (a PartialObjectMetadata, no data). */
const metadataOnly = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

export interface KubeLiveReaderOptions {
  /** Loaded configuration (its current context). */
  readonly kubeConfig: KubeConfig;
  /** User-Agent of the requests, naming the command. */
  readonly userAgent: string;
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

function strings(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

function secretObject(secret: unknown, namespace: string): SecretObject {
  const metadata = field(secret, 'metadata');
  const name = field(metadata, 'name');
  const ns = field(metadata, 'namespace');
  return {
    name: typeof name === 'string' ? name : '',
    namespace: typeof ns === 'string' ? ns : namespace,
    labels: strings(field(metadata, 'labels')),
    annotations: strings(field(metadata, 'annotations')),
    data: strings(field(secret, 'data')),
  };
}

/** The Secret a Deployment's pod template mounts as volume `volume`, if any. */
function mountedSecretName(deployment: unknown, volume: string): string | undefined {
  const volumes = field(field(field(field(deployment, 'spec'), 'template'), 'spec'), 'volumes');
  if (!Array.isArray(volumes)) return undefined;
  const mounted: unknown = volumes.find((v: unknown) => field(v, 'name') === volume);
  const name = field(field(mounted, 'secret'), 'secretName');
  return typeof name === 'string' ? name : undefined;
}

/** Sends one GET with its options filled by the access. */
type Send = (url: URL, options: KubeRequest) => Promise<ReadAnswer>;

const sendHttp1: Send = (url, options) =>
  new Promise<ReadAnswer>((resolve, reject) => {
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const req = send(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });

/**
 * Over one HTTP/2 connection while the server speaks HTTP/2 (`http2-reads.ts`), over
 * node:https from the first sign it does not.
 */
function multiplexed(server: string, tls: TlsOptions): Send {
  let reads: Http2Reads | undefined = new Http2Reads(server, tls);
  return async (url, options) => {
    if (reads !== undefined) {
      try {
        return await reads.get(`${url.pathname}${url.search}`, options.headers);
      } catch (error) {
        if (!(error instanceof Http2Unsupported)) throw error;
        reads = undefined;
      }
    }
    return sendHttp1(url, options);
  };
}

/** GETs `path`; the answer's status and body, or a HapticError naming `action` when none came. */
async function get(
  access: KubeAccess,
  send: Send,
  path: string,
  accept: string,
  userAgent: string,
  action: string,
): Promise<ReadAnswer> {
  const url = new URL(path, access.server);
  const options: KubeRequest = {
    method: 'GET',
    headers: { Accept: accept, 'User-Agent': userAgent },
  };
  try {
    await access.apply(options);
    return await send(url, options);
  } catch (error) {
    throw kubeUnreachableError(action, error);
  }
}

/** The object at `path`, or undefined when the API server says 404. */
async function read(
  access: KubeAccess,
  send: Send,
  path: string,
  accept: string,
  userAgent: string,
  action: string,
): Promise<unknown> {
  const answer = await get(access, send, path, accept, userAgent, action);
  if (answer.status === 404) return undefined;
  if (answer.status !== 200) throw kubeStatusError(action, answer.status, answer.body);
  try {
    return JSON.parse(answer.body) as unknown;
  } catch (error) {
    throw kubeUnreachableError(`${action} (the answer is not JSON)`, error);
  }
}

export interface AccessLiveReaderOptions {
  /** User-Agent of the requests, naming the command. */
  readonly userAgent: string;
  /**
   * Send the reads over one HTTP/2 connection when the access allows it (fixed TLS options),
   * falling back to HTTP/1.1 for a server without HTTP/2: for a short command, whose reads
   * all come at once. A long-running reader keeps node:https's connections.
   */
  readonly multiplexed?: boolean;
}

/** A reader with the access given (see `loadKubeAccess`). */
export function createAccessLiveReader(
  access: KubeAccess,
  { userAgent, multiplexed: multiplex = false }: AccessLiveReaderOptions,
): LiveReader {
  const send =
    multiplex && access.tls !== undefined ? multiplexed(access.server, access.tls) : sendHttp1;
  const secretPath = (namespace: string, name: string): string =>
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`;
  return {
    async readSecret(namespace, name) {
      const action = `read Secret ${namespace}/${name}`;
      const secret = await read(
        access,
        send,
        secretPath(namespace, name),
        'application/json',
        userAgent,
        action,
      );
      return secret === undefined ? undefined : secretObject(secret, namespace);
    },
    async readSecretMetadata(namespace, name) {
      const action = `read the metadata of Secret ${namespace}/${name}`;
      const found = await read(
        access,
        send,
        secretPath(namespace, name),
        metadataOnly,
        userAgent,
        action,
      );
      return found === undefined ? undefined : secretObject(found, namespace);
    },
    async readMountedSecret(namespace, deployment, volume) {
      const path = `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/deployments/${encodeURIComponent(deployment)}`;
      try {
        const found = await read(
          access,
          send,
          path,
          'application/json',
          userAgent,
          `read Deployment ${namespace}/${deployment}`,
        );
        return mountedSecretName(found, volume);
      } catch (error) {
        // Advisory only: without permission to read Deployments, skip the switch warning.
        if (error instanceof HapticError && error.code === errorCodes.KUBE_FORBIDDEN) {
          return undefined;
        }
        throw error;
      }
    },
  };
}

/** A reader over a loaded client configuration. */
export function createKubeLiveReader(options: KubeLiveReaderOptions): LiveReader {
  return createAccessLiveReader(kubeAccessOf(options.kubeConfig), {
    userAgent: options.userAgent,
  });
}
