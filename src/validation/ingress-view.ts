import { isRecord } from '../is-record.ts';
/**
 * An Ingress (networking.k8s.io/v1) read from an untyped object, once, at the edge: from an
 * informer's cache or from an AdmissionReview. Structure only; the values are checked by
 * `validateIngress`.
 */

export interface BackendView {
  readonly serviceName: string | undefined;
  readonly port: { readonly number?: number; readonly name?: string } | undefined;
  /** A `resource` backend, which HAProxy cannot serve. */
  readonly resource: boolean;
}

export interface PathView {
  readonly path: string | undefined;
  readonly pathType: string | undefined;
  readonly backend: BackendView | undefined;
}

export interface RuleView {
  readonly host: string | undefined;
  readonly paths: readonly PathView[];
}

export interface TlsView {
  readonly hosts: readonly string[];
  readonly secretName: string | undefined;
}

export interface IngressView {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  /**
   * metadata.creationTimestamp in milliseconds since the epoch; undefined when the object has
   * none yet (an object being created) or it does not parse. Decides which Ingress keeps a
   * contested host and path: the oldest.
   */
  readonly createdAt: number | undefined;
  readonly ingressClassName: string | undefined;
  readonly annotations: Readonly<Record<string, string>>;
  readonly defaultBackend: BackendView | undefined;
  readonly rules: readonly RuleView[];
  readonly tls: readonly TlsView[];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function strings(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

/** A timestamp as the API carries it (RFC 3339 text) or as client-node decodes it (Date). */
function timestamp(value: unknown): number | undefined {
  const time =
    value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isFinite(time) ? time : undefined;
}

function backendOf(value: unknown): BackendView | undefined {
  if (!isRecord(value)) return undefined;
  const service = isRecord(value.service) ? value.service : undefined;
  const port = isRecord(service?.port) ? service.port : undefined;
  const number = typeof port?.number === 'number' ? port.number : undefined;
  const name = text(port?.name);
  return {
    serviceName: text(service?.name),
    port:
      port === undefined
        ? undefined
        : { ...(number === undefined ? {} : { number }), ...(name === undefined ? {} : { name }) },
    resource: value.resource !== undefined && value.resource !== null,
  };
}

/** Reads an Ingress; a sentence when the object is not one. */
export function readIngress(value: unknown, fallbackNamespace = ''): IngressView | string {
  if (!isRecord(value) || (value.kind !== undefined && value.kind !== 'Ingress')) {
    return 'The object is not an Ingress.';
  }
  const metadata = isRecord(value.metadata) ? value.metadata : {};
  const spec = isRecord(value.spec) ? value.spec : {};
  return {
    namespace: text(metadata.namespace) ?? fallbackNamespace,
    name: text(metadata.name) ?? '',
    uid: text(metadata.uid) ?? '',
    generation: typeof metadata.generation === 'number' ? metadata.generation : 0,
    createdAt: timestamp(metadata.creationTimestamp),
    ingressClassName: text(spec.ingressClassName),
    annotations: strings(metadata.annotations),
    defaultBackend: backendOf(spec.defaultBackend),
    rules: list(spec.rules).map((rule) => {
      const r = isRecord(rule) ? rule : {};
      const http = isRecord(r.http) ? r.http : {};
      return {
        host: text(r.host),
        paths: list(http.paths).map((path) => {
          const p = isRecord(path) ? path : {};
          return { path: text(p.path), pathType: text(p.pathType), backend: backendOf(p.backend) };
        }),
      };
    }),
    tls: list(spec.tls).map((tls) => {
      const t = isRecord(tls) ? tls : {};
      return {
        hosts: list(t.hosts).filter((host): host is string => typeof host === 'string'),
        secretName: text(t.secretName),
      };
    }),
  };
}

/** The legacy class annotation, still honoured. */
export const ingressClassAnnotation = 'kubernetes.io/ingress.class';

/** Whether the Ingress belongs to `className` (or to the default class, when ours is it). */
export function ingressIsOurs(
  view: IngressView,
  className: string,
  ourClassIsDefault: boolean,
): boolean {
  const named = view.ingressClassName ?? view.annotations[ingressClassAnnotation];
  return named === undefined ? ourClassIsDefault : named === className;
}
