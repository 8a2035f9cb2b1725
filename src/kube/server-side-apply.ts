/**
 * Server-side apply of a raw object, sent as JSON exactly as given. client-node's typed
 * clients re-serialize objects through their generated models, which silently drops keys the
 * models spell differently (every `x-kubernetes-*` of a CRD schema); this request does not.
 */
import { request, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { HapticError, errorCodes } from '../errors.ts';

export interface ApplyOptions {
  readonly fieldManager: string;
  /** Take ownership of fields another manager set. @default false */
  readonly force?: boolean;
  /** Bound on the whole request. @default 30_000 */
  readonly timeoutMs?: number;
}

/** Applies `object` at `path` (the object's own URL, e.g. `/apis/g/v1/things/name`); returns the result. */
export async function serverSideApply(
  kc: KubeConfig,
  path: string,
  object: unknown,
  options: ApplyOptions,
): Promise<Record<string, unknown>> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) {
    throw new HapticError(
      errorCodes.KUBE_CONFIG_MISSING,
      'The Kubernetes client configuration has no current cluster; set current-context.',
    );
  }
  const url = new URL(path, cluster.server);
  url.searchParams.set('fieldManager', options.fieldManager);
  if (options.force === true) url.searchParams.set('force', 'true');
  const body = JSON.stringify(object);
  const requestOptions: RequestOptions = {
    method: 'PATCH',
    headers: {
      'Content-Type': 'application/apply-patch+yaml',
      Accept: 'application/json',
      'Content-Length': Buffer.byteLength(body),
    },
    timeout: options.timeoutMs ?? 30_000,
  };
  await kc.applyToHTTPSOptions(requestOptions);
  return new Promise((resolve, reject) => {
    const req = request(url, requestOptions, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          resolve(JSON.parse(text) as Record<string, unknown>);
        } else {
          reject(new ApplyRejected(status, statusMessage(text)));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('the API server did not answer in time')));
    req.on('error', reject);
    req.end(body);
  });
}

/** The API server refused the apply: its HTTP status and its Status message. */
export class ApplyRejected extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(`HTTP ${status}: ${message}`);
    this.name = 'ApplyRejected';
    this.status = status;
  }
}

function statusMessage(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'message' in parsed) {
      return String(parsed.message);
    }
  } catch {
    // not a Status body; fall through to the raw text
  }
  return text.trim().slice(0, 500);
}
