/**
 * AdmissionReview v1 (admission.k8s.io/v1): the request the API server sends, decoded from
 * untrusted JSON once, and the response it expects back.
 */
import { isMap } from '../validation/index.ts';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  readonly uid: string;
  /** Kind of the object (`Secret` in group `` for ours). */
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly name: string;
  readonly namespace: string;
  readonly operation: AdmissionOperation;
  readonly username: string;
  /** The object after the write (CREATE, UPDATE); null otherwise. */
  readonly object: unknown;
  /** The object before the write (UPDATE, DELETE); null otherwise. */
  readonly oldObject: unknown;
  readonly dryRun: boolean;
}

export interface AdmissionStatus {
  /** HTTP-like code: 403 for a denial, 400 for a bad request, 500/504 when validation failed. */
  readonly code: number;
  readonly message: string;
  readonly reason?: string;
}

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: AdmissionStatus;
  readonly warnings?: readonly string[];
}

const apiVersion = 'admission.k8s.io/v1';
const operations: readonly AdmissionOperation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Decodes an AdmissionReview request, or says why it is not one. */
export function decodeAdmissionReview(body: unknown): AdmissionRequest | string {
  if (!isMap(body)) return 'The body is not a JSON object.';
  if (body.apiVersion !== apiVersion || body.kind !== 'AdmissionReview') {
    return `The body is not an ${apiVersion} AdmissionReview.`;
  }
  const request = body.request;
  if (!isMap(request)) return 'The AdmissionReview has no request.';
  const uid = text(request.uid);
  if (uid === '') return 'The AdmissionReview request has no uid.';
  const operation = operations.find((op) => op === request.operation);
  if (operation === undefined) {
    return `The AdmissionReview request has an unknown operation ${JSON.stringify(request.operation)}.`;
  }
  const kind = isMap(request.kind) ? request.kind : {};
  const userInfo = isMap(request.userInfo) ? request.userInfo : {};
  return {
    uid,
    kind: { group: text(kind.group), version: text(kind.version), kind: text(kind.kind) },
    name: text(request.name),
    namespace: text(request.namespace),
    operation,
    username: text(userInfo.username),
    object: request.object ?? null,
    oldObject: request.oldObject ?? null,
    dryRun: request.dryRun === true,
  };
}

/** The AdmissionReview that carries a response. */
export function encodeAdmissionReview(response: AdmissionResponse): Record<string, unknown> {
  return { apiVersion, kind: 'AdmissionReview', response };
}
