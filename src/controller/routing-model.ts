/**
 * The template context: routes, backends and certificates built from a cluster snapshot,
 * every value checked (see validate-ingress.ts). Pure and deterministic: the same snapshot
 * gives the same model, in the same order, whatever order the informers delivered objects in.
 *
 * Invalid Ingresses are excluded (each with its problem); Ingresses naming a missing TLS
 * Secret are served with the default certificate and reported as a warning.
 */
import { type ClusterSnapshot, objectKey } from './cluster-snapshot.ts';
import { isProblem } from '../validation/ingress-checks.ts';
import type { IngressView } from '../validation/ingress-view.ts';
import { backendName, buildBackend } from './model-backends.ts';
import { certificatePem } from './tls-secret.ts';
import { type ValidIngress, validateIngress } from '../validation/validate-ingress.ts';

export interface ModelRoute {
  /** Host as written; `*` for rules without a host. */
  readonly host: string;
  readonly pathType: 'Exact' | 'Prefix';
  readonly path: string;
  /** Map keys: the path itself (without a trailing slash) and, for Prefix, the subtree. */
  readonly exactKey: string;
  readonly prefixKey: string;
  readonly backend: string;
  readonly ingress: string;
}

export interface ModelServer {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  /** `address:port`, IPv6 in brackets. */
  readonly endpoint: string;
}

/** One line of a map file: a key (host and path) and a backend name. */
export interface MapEntry {
  readonly key: string;
  readonly backend: string;
}

export interface ModelBackend {
  readonly name: string;
  readonly namespace: string;
  readonly service: string;
  readonly servicePort: string;
  readonly servers: readonly ModelServer[];
}

export interface ModelCertificate {
  /** Path of the PEM file under the base directory. */
  readonly file: string;
  readonly secret: string;
  /** SNI names (empty: the certificate's own names). */
  readonly hosts: readonly string[];
}

export interface ModelIngress {
  readonly namespace: string;
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
}

export interface ExcludedIngress {
  readonly namespace: string;
  readonly name: string;
  readonly field: string;
  readonly message: string;
}

export interface RoutingModel {
  readonly routes: readonly ModelRoute[];
  /**
   * Exact-match keys: Exact paths, and Prefix paths themselves (`/foo` for Prefix `/foo`),
   * Exact winning when both claim a key. Sorted by key.
   */
  readonly exactMap: readonly MapEntry[];
  /** Prefix subtrees (`host/foo/`), longest first, for HAProxy's first-match `map_beg`. */
  readonly prefixMap: readonly MapEntry[];
  readonly backends: readonly ModelBackend[];
  readonly certificates: readonly ModelCertificate[];
  /** `ssl/default.pem`, or null without a usable default certificate. */
  readonly defaultCertificate: string | null;
  readonly ingresses: readonly ModelIngress[];
}

export interface ModelResult {
  readonly model: RoutingModel;
  /** Files the model refers to (certificates), path → content. */
  readonly files: ReadonlyMap<string, string>;
  readonly excluded: readonly ExcludedIngress[];
  /** Non-fatal problems, one sentence each (missing Secrets, default certificate). */
  readonly warnings: readonly { readonly ingress?: string; readonly message: string }[];
}

export interface ModelOptions {
  /** `namespace/name` of the default certificate Secret. */
  readonly defaultCertificate?: string;
  readonly now: Date;
}

const defaultCertificateFile = 'ssl/default.pem';

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.replace(/\/+$/, '') || '/' : path;
}

function routeOrder(a: ModelRoute, b: ModelRoute): number {
  return (
    compare(a.host, b.host) ||
    compare(a.pathType, b.pathType) ||
    b.path.length - a.path.length ||
    compare(a.path, b.path)
  );
}

function mapEntries(routes: readonly ModelRoute[]): {
  exactMap: MapEntry[];
  prefixMap: MapEntry[];
} {
  const exact = new Map<string, string>();
  for (const route of routes) {
    if (route.pathType === 'Exact') exact.set(route.exactKey, route.backend);
  }
  for (const route of routes) {
    if (route.pathType === 'Prefix' && !exact.has(route.exactKey)) {
      exact.set(route.exactKey, route.backend);
    }
  }
  const prefix = routes
    .filter((route) => route.pathType === 'Prefix')
    .map((route) => ({ key: route.prefixKey, backend: route.backend }))
    .sort((a, b) => b.key.length - a.key.length || compare(a.key, b.key));
  return {
    exactMap: [...exact.entries()]
      .sort(([a], [b]) => compare(a, b))
      .map(([key, backend]) => ({ key, backend })),
    prefixMap: prefix,
  };
}

/** Builds the model; `ingresses` in the snapshot are already filtered to our class. */
export function buildRoutingModel(snapshot: ClusterSnapshot, options: ModelOptions): ModelResult {
  const excluded: ExcludedIngress[] = [];
  const warnings: { ingress?: string; message: string }[] = [];
  const files = new Map<string, string>();
  const valid: { ingress: ValidIngress; tlsFiles: ModelCertificate[] }[] = [];
  const sorted = [...snapshot.ingresses].sort((a: IngressView, b: IngressView) =>
    compare(objectKey(a.namespace, a.name), objectKey(b.namespace, b.name)),
  );
  for (const view of sorted) {
    const label = objectKey(view.namespace, view.name);
    const checked = validateIngress(view);
    if (isProblem(checked)) {
      excluded.push({ namespace: view.namespace, name: view.name, ...checked });
      continue;
    }
    const tlsFiles: ModelCertificate[] = [];
    let problem: string | undefined;
    for (const tls of checked.tls) {
      const key = objectKey(view.namespace, tls.secretName);
      const secret = snapshot.secrets.get(key);
      if (secret === undefined) {
        warnings.push({
          ingress: label,
          message: `Ingress ${label} names the TLS Secret ${key}, which does not exist; its hosts get the default certificate until it does.`,
        });
        continue;
      }
      const file = `ssl/${view.namespace}_${tls.secretName}.pem`;
      const pem = certificatePem(secret.data, key, options.now);
      if (!pem.ok) {
        problem = pem.message;
        break;
      }
      files.set(file, pem.pem);
      tlsFiles.push({ file, secret: key, hosts: [...tls.hosts].sort(compare) });
    }
    if (problem !== undefined) {
      excluded.push({
        namespace: view.namespace,
        name: view.name,
        field: 'spec.tls',
        message: `Ingress ${label} is not served: ${problem}`,
      });
      continue;
    }
    valid.push({ ingress: checked, tlsFiles });
  }

  const routes = new Map<string, ModelRoute>();
  const backends = new Map<string, ModelBackend>();
  const certificates = new Map<string, ModelCertificate>();
  for (const { ingress, tlsFiles } of valid) {
    for (const route of ingress.routes) {
      const backend = backendName(ingress.namespace, route.service);
      if (!backends.has(backend)) {
        backends.set(backend, buildBackend(snapshot, ingress.namespace, route.service));
      }
      const host = route.host === '' ? '*' : route.host;
      const exact = trimSlash(route.path);
      const modelRoute: ModelRoute = {
        host,
        pathType: route.pathType,
        path: route.pathType === 'Prefix' ? exact : route.path,
        exactKey: `${host}${route.pathType === 'Prefix' ? exact : route.path}`,
        prefixKey: `${host}${exact === '/' ? '/' : `${exact}/`}`,
        backend,
        ingress: objectKey(ingress.namespace, ingress.name),
      };
      const identity = `${host} ${modelRoute.pathType} ${modelRoute.path}`;
      // The first Ingress (by namespace/name) that claims a host and path keeps it.
      if (!routes.has(identity)) routes.set(identity, modelRoute);
    }
    for (const certificate of tlsFiles) {
      const existing = certificates.get(certificate.file);
      const hosts = [...new Set([...(existing?.hosts ?? []), ...certificate.hosts])].sort(compare);
      certificates.set(certificate.file, { ...certificate, hosts });
    }
  }

  let defaultCertificate: string | null = null;
  if (options.defaultCertificate !== undefined) {
    const secret = snapshot.secrets.get(options.defaultCertificate);
    const pem =
      secret === undefined
        ? undefined
        : certificatePem(secret.data, options.defaultCertificate, options.now);
    if (pem?.ok === true) {
      files.set(defaultCertificateFile, pem.pem);
      defaultCertificate = defaultCertificateFile;
    } else {
      warnings.push({
        message:
          pem === undefined
            ? `The default certificate Secret ${options.defaultCertificate} does not exist; HTTPS serves only the Ingresses' own certificates.`
            : `The default certificate is not used: ${pem.message}`,
      });
    }
  }

  const sortedRoutes = [...routes.values()].sort(routeOrder);
  return {
    model: {
      routes: sortedRoutes,
      ...mapEntries(sortedRoutes),
      backends: [...backends.values()].sort((a, b) => compare(a.name, b.name)),
      certificates: [...certificates.values()].sort((a, b) => compare(a.file, b.file)),
      defaultCertificate,
      ingresses: valid.map(({ ingress }) => ({
        namespace: ingress.namespace,
        name: ingress.name,
        annotations: ingress.annotations,
      })),
    },
    files,
    excluded,
    warnings,
  };
}
