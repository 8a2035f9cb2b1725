/**
 * One Ingress checked as a whole: every host, path, backend, TLS entry and template
 * annotation. The result is either the routes the Ingress asks for, in values that are safe
 * to hand to a template, or the first problem found.
 */
import {
  type IngressProblem,
  type PathType,
  hostProblem,
  isProblem,
  namespaceProblem,
  pathProblem,
  pathTypeOf,
  portProblem,
  secretNameProblem,
  serviceNameProblem,
  templateAnnotations,
} from './ingress-checks.ts';
import type { BackendView, IngressView } from './ingress-view.ts';
import { hostSharingProblem } from './host-sharing.ts';

export interface ServiceRef {
  readonly name: string;
  readonly port: { readonly number: number } | { readonly name: string };
}

export interface IngressRoute {
  /** Where the route is written: `spec.rules[0].http.paths[1]` or `spec.defaultBackend`. */
  readonly field: string;
  /** Empty: any host. */
  readonly host: string;
  readonly path: string;
  readonly pathType: PathType;
  readonly service: ServiceRef;
}

export interface IngressTls {
  /** `spec.tls[0]`. */
  readonly field: string;
  readonly hosts: readonly string[];
  readonly secretName: string;
}

export interface ValidIngress {
  readonly namespace: string;
  readonly name: string;
  /** As in the view: decides which Ingress keeps a contested host and path. */
  readonly createdAt: number | undefined;
  readonly annotations: Readonly<Record<string, string>>;
  readonly routes: readonly IngressRoute[];
  readonly tls: readonly IngressTls[];
}

/** Most rules, paths and TLS entries of one Ingress. */
export const ingressLimits = { rules: 1000, pathsPerRule: 1000, tls: 100 } as const;

function serviceOf(
  backend: BackendView | undefined,
  field: string,
  label: string,
): ServiceRef | IngressProblem {
  if (backend === undefined || backend.resource || backend.serviceName === undefined) {
    return {
      field,
      message: `Ingress ${label} has ${field} without a service; HAProxy serves Service backends only, so name a Service and port.`,
    };
  }
  const nameProblem = serviceNameProblem(backend.serviceName, `${field}.service.name`, label);
  if (nameProblem !== undefined) return nameProblem;
  const port = backend.port;
  const problem = portProblem(port, `${field}.service.port`, label);
  if (problem !== undefined) return problem;
  return {
    name: backend.serviceName,
    port: port?.number !== undefined ? { number: port.number } : { name: port?.name ?? '' },
  };
}

export function validateIngress(view: IngressView): ValidIngress | IngressProblem {
  const label = `${view.namespace}/${view.name}`;
  const namespace = namespaceProblem(view.namespace, label);
  if (namespace !== undefined) return namespace;
  const annotations = templateAnnotations(view.annotations, label);
  if (isProblem(annotations)) return annotations;
  const sharing = hostSharingProblem(annotations, label);
  if (sharing !== undefined) return sharing;
  if (view.rules.length > ingressLimits.rules || view.tls.length > ingressLimits.tls) {
    return {
      field: 'spec',
      message: `Ingress ${label} has more than ${ingressLimits.rules} rules or ${ingressLimits.tls} TLS entries; split it into several Ingresses.`,
    };
  }
  const routes: IngressRoute[] = [];
  if (view.defaultBackend !== undefined) {
    const service = serviceOf(view.defaultBackend, 'spec.defaultBackend', label);
    if (isProblem(service)) return service;
    routes.push({ field: 'spec.defaultBackend', host: '', path: '/', pathType: 'Prefix', service });
  }
  for (const [r, rule] of view.rules.entries()) {
    const host = rule.host ?? '';
    if (host !== '') {
      const problem = hostProblem(host, `spec.rules[${r}].host`, label);
      if (problem !== undefined) return problem;
    }
    if (rule.paths.length > ingressLimits.pathsPerRule) {
      return {
        field: `spec.rules[${r}].http.paths`,
        message: `Ingress ${label} has more than ${ingressLimits.pathsPerRule} paths in spec.rules[${r}]; split it.`,
      };
    }
    for (const [p, entry] of rule.paths.entries()) {
      const field = `spec.rules[${r}].http.paths[${p}]`;
      const path = entry.path ?? '/';
      const problem = pathProblem(path, `${field}.path`, label);
      if (problem !== undefined) return problem;
      const pathType = pathTypeOf(entry.pathType, `${field}.pathType`, label);
      if (isProblem(pathType)) return pathType;
      const service = serviceOf(entry.backend, `${field}.backend`, label);
      if (isProblem(service)) return service;
      routes.push({ field, host, path, pathType, service });
    }
  }
  const tls: IngressTls[] = [];
  for (const [t, entry] of view.tls.entries()) {
    for (const [h, host] of entry.hosts.entries()) {
      const problem = hostProblem(host, `spec.tls[${t}].hosts[${h}]`, label);
      if (problem !== undefined) return problem;
    }
    if (entry.secretName === undefined) continue;
    const problem = secretNameProblem(entry.secretName, `spec.tls[${t}].secretName`, label);
    if (problem !== undefined) return problem;
    tls.push({ field: `spec.tls[${t}]`, hosts: entry.hosts, secretName: entry.secretName });
  }
  return {
    namespace: view.namespace,
    name: view.name,
    createdAt: view.createdAt,
    annotations,
    routes,
    tls,
  };
}
