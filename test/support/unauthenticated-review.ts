/**
 * What anyone who reaches the controller's :9443 can send: an AdmissionReview POSTed to
 * /validate over HTTPS without a client certificate. The server is verified (`caPem`); the
 * client proves nothing.
 */
import { request } from 'node:https';

export interface ReviewAnswer {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: { readonly code: number; readonly message: string };
}

/** An AdmissionReview of a CREATE of `object` (kind and resource as given), from nobody. */
export function admissionReview(
  uid: string,
  kind: { readonly group: string; readonly version: string; readonly kind: string },
  resource: string,
  object: {
    readonly metadata: { readonly name: string; readonly namespace: string };
  } & Record<string, unknown>,
): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind,
      resource: { group: kind.group, version: kind.version, resource },
      name: object.metadata.name,
      namespace: object.metadata.namespace,
      operation: 'CREATE',
      userInfo: { username: 'system:anonymous' },
      object,
      oldObject: null,
      dryRun: false,
    },
  });
}

/** Where a review goes: an address, the CA that verifies the server, and the name it must have. */
export interface ReviewTarget {
  readonly host: string;
  readonly port: number;
  readonly caPem: string;
  /**
   * SNI and the name the server's certificate is verified against, when it is not `host`
   * (a webhook Service's `<service>.<namespace>.svc` reached at a Pod IP).
   */
  readonly servername?: string;
}

/** POSTs `body` to https://host:port/validate without a client certificate. */
export function postUnauthenticatedReview(
  target: ReviewTarget,
  body: string,
): Promise<ReviewAnswer> {
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: target.host,
        port: target.port,
        path: '/validate',
        method: 'POST',
        ca: target.caPem,
        ...(target.servername === undefined ? {} : { servername: target.servername }),
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: 15_000,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const parsed = JSON.parse(text) as { response?: ReviewAnswer };
          if (parsed.response === undefined) reject(new Error(`no response: ${text}`));
          else resolve(parsed.response);
        });
      },
    );
    call.on('error', reject);
    call.on('timeout', () => call.destroy(new Error('timeout')));
    call.end(body);
  });
}
