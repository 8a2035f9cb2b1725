/**
 * AdmissionReview v1 (admission.k8s.io/v1): the request the API server sends, decoded from
 * untrusted JSON once, and the response it expects back.
 */
import { isRecord } from '../is-record.ts';
import type { Problem } from '../problem.ts';

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

/**
 * One reason of a denial (metav1.StatusCause): the finding's code as the reason
 * (`ValuesSchemaViolation`), its path and its sentence.
 */
export interface AdmissionStatusCause extends Problem {
  /** Where: a values path, a Secret key, a field of the object. */
  readonly field: string;
}

export interface AdmissionStatus {
  /** HTTP-like code: 403 for a denial, 400 for a bad request, 500/504 when validation failed. */
  readonly code: number;
  /** Every reason in sentences; what the API server prefixes with the webhook's name. */
  readonly message: string;
  readonly reason?: string;
  /** A denial's reasons one by one, for clients that read them (metav1.StatusDetails). */
  readonly details?: { readonly causes: readonly AdmissionStatusCause[] };
}

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: AdmissionStatus;
  readonly warnings?: readonly string[];
}

const apiVersion = 'admission.k8s.io/v1';
const operations: readonly AdmissionOperation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/**
 * Longest uid, name, namespace, group, version, kind or username accepted. The API server
 * sends UIDs of 36 characters and names of at most 253; usernames are short.
 * @default 512
 */
export const maxFieldLength = 512;

type Field = { readonly value: string } | { readonly problem: string };

/** An optional string field: absent is '', anything but a bounded string is a problem. */
function field(value: unknown, path: string): Field {
  if (value === undefined || value === null) return { value: '' };
  if (typeof value !== 'string') return { problem: `${path} must be a string.` };
  if (value.length > maxFieldLength) {
    return { problem: `${path} is longer than ${String(maxFieldLength)} characters.` };
  }
  return { value };
}

/** An embedded object (object, oldObject): a JSON object or absent. */
function embedded(value: unknown): { readonly value: unknown } | undefined {
  if (value === undefined || value === null) return { value: null };
  return isRecord(value) ? { value } : undefined;
}

/**
 * Decodes an AdmissionReview request, or says why it is not one. Every field is checked before
 * anything is routed, so a malformed review never reaches a validator.
 */
export function decodeAdmissionReview(body: unknown): AdmissionRequest | string {
  if (!isRecord(body)) return 'The body is not a JSON object.';
  if (body.apiVersion !== apiVersion || body.kind !== 'AdmissionReview') {
    return `The body is not an ${apiVersion} AdmissionReview.`;
  }
  const request = body.request;
  if (!isRecord(request)) return 'The AdmissionReview has no request.';
  const operation = operations.find((op) => op === request.operation);
  if (operation === undefined) {
    const given = typeof request.operation === 'string' ? request.operation.slice(0, 64) : '';
    return `The AdmissionReview request has an unknown operation ${JSON.stringify(given)}: expected CREATE, UPDATE, DELETE or CONNECT.`;
  }
  if (request.kind !== undefined && !isRecord(request.kind)) {
    return 'The AdmissionReview is malformed: request.kind must be an object (group, version, kind).';
  }
  if (request.userInfo !== undefined && !isRecord(request.userInfo)) {
    return 'The AdmissionReview is malformed: request.userInfo must be an object.';
  }
  const kind = isRecord(request.kind) ? request.kind : {};
  const userInfo = isRecord(request.userInfo) ? request.userInfo : {};
  const fields = {
    uid: field(request.uid, 'request.uid'),
    group: field(kind.group, 'request.kind.group'),
    version: field(kind.version, 'request.kind.version'),
    kind: field(kind.kind, 'request.kind.kind'),
    name: field(request.name, 'request.name'),
    namespace: field(request.namespace, 'request.namespace'),
    username: field(userInfo.username, 'request.userInfo.username'),
  };
  for (const decoded of Object.values(fields)) {
    if ('problem' in decoded) return `The AdmissionReview is malformed: ${decoded.problem}`;
  }
  const text = (decoded: Field): string => ('value' in decoded ? decoded.value : '');
  const uid = text(fields.uid);
  if (uid === '') return 'The AdmissionReview request has no uid.';
  const object = embedded(request.object);
  const oldObject = embedded(request.oldObject);
  if (object === undefined || oldObject === undefined) {
    return 'The AdmissionReview is malformed: request.object and request.oldObject must be JSON objects or null.';
  }
  if (request.dryRun !== undefined && typeof request.dryRun !== 'boolean') {
    return 'The AdmissionReview is malformed: request.dryRun must be a boolean.';
  }
  return {
    uid,
    kind: { group: text(fields.group), version: text(fields.version), kind: text(fields.kind) },
    name: text(fields.name),
    namespace: text(fields.namespace),
    operation,
    username: text(fields.username),
    object: object.value,
    oldObject: oldObject.value,
    dryRun: request.dryRun === true,
  };
}

/** The AdmissionReview that carries a response. */
export function encodeAdmissionReview(response: AdmissionResponse): Record<string, unknown> {
  return { apiVersion, kind: 'AdmissionReview', response };
}
