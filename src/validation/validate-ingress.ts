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
import {
  type AnnotationFinding,
  annotationReasons,
  readIngressOptions,
} from '../annotations/ingress-options.ts';
import { isExpected, parsePathRegex, type PathRegex } from '../annotations/annotation-values.ts';
import {
  type BackendOptions,
  type CanarySpec,
  canaryOf,
  pathsAreRegex,
  routeOptions,
} from '../annotations/route-options.ts';
import type { IngressOptions } from '../annotations/annotation-catalog.ts';

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
  /** What the route asks of its backend (annotations, TLS host). */
  readonly options: BackendOptions;
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
  /**
   * Annotations not served as written, and routes left out for them (their paths are left out
   * of `routes`): one Warning Event on the Ingress tells them.
   */
  readonly findings: readonly AnnotationFinding[];
  /**
   * Set for a canary Ingress (annotation `canary`): its routes claim no host and path of their
   * own; each is served beside the route of another Ingress with the same host and path.
   */
  readonly canary: CanarySpec | undefined;
}

/** A route as written, before its options. */
type DraftRoute = Omit<IngressRoute, 'options'> & { readonly regex: PathRegex | undefined };

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

/** The hosts served over TLS: every TLS entry's hosts, or the rule hosts for an empty list. */
function tlsHostSet(view: IngressView): ReadonlySet<string> {
  const hosts = new Set<string>();
  for (const entry of view.tls) {
    const list = entry.hosts.length > 0 ? entry.hosts : view.rules.map((rule) => rule.host ?? '');
    for (const host of list) if (host !== '') hosts.add(host);
  }
  return hosts;
}

/** The routes of the rules, or the first problem; regex paths that do not parse go to `leftOut`. */
function ruleRoutes(
  view: IngressView,
  label: string,
  regexPaths: boolean,
  leftOut: AnnotationFinding[],
): DraftRoute[] | IngressProblem {
  const routes: DraftRoute[] = [];
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
      let regex: PathRegex | undefined;
      if (regexPaths) {
        const parsed = parsePathRegex(path);
        if (isExpected(parsed)) {
          leftOut.push(regexLeftOut(label, `${field}.path`, path, parsed.expected));
          continue;
        }
        regex = parsed;
      } else {
        const problem = pathProblem(path, `${field}.path`, label);
        if (problem !== undefined) return problem;
      }
      const pathType = regexPaths
        ? 'Regex'
        : pathTypeOf(entry.pathType, `${field}.pathType`, label);
      if (isProblem(pathType)) return pathType;
      const service = serviceOf(entry.backend, `${field}.backend`, label);
      if (isProblem(service)) return service;
      routes.push({ field, host, path, pathType, service, regex });
    }
  }
  return routes;
}

function regexLeftOut(
  label: string,
  field: string,
  path: string,
  expected: string,
): AnnotationFinding {
  return {
    reason: annotationReasons.AnnotationInvalid,
    field,
    annotations: [],
    message: `Ingress ${label} has ${field} ${JSON.stringify(path.slice(0, 80))}, which is not ${expected}; its paths are regular expressions (use-regex or rewrite-target). That path is left out until it is fixed.`,
  };
}

/** The routes with their options; a route whose options cannot be made goes to `leftOut`. */
function withOptions(
  drafts: readonly DraftRoute[],
  options: IngressOptions,
  tlsHosts: ReadonlySet<string>,
  label: string,
  leftOut: AnnotationFinding[],
): IngressRoute[] {
  const routes: IngressRoute[] = [];
  for (const { regex, ...route } of drafts) {
    const made = routeOptions(options, { regex, tlsHost: tlsHosts.has(route.host) });
    if ('problem' in made) {
      leftOut.push({
        reason: annotationReasons.AnnotationInvalid,
        field: route.field,
        annotations: [],
        message: `Ingress ${label} has ${route.field}, whose ${made.problem}; that path is left out until the path or the rewrite-target is fixed.`,
      });
      continue;
    }
    routes.push({ ...route, options: made });
  }
  return routes;
}

function tlsEntries(view: IngressView, label: string): IngressTls[] | IngressProblem {
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
  return tls;
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
  const read = readIngressOptions(view.annotations, label);
  const findings = [...read.findings];
  const drafts: DraftRoute[] = [];
  if (view.defaultBackend !== undefined) {
    const service = serviceOf(view.defaultBackend, 'spec.defaultBackend', label);
    if (isProblem(service)) return service;
    drafts.push({
      ...{ field: 'spec.defaultBackend', host: '', path: '/', pathType: 'Prefix' },
      ...{ service, regex: undefined },
    });
  }
  const rules = ruleRoutes(view, label, pathsAreRegex(read.options), findings);
  if (isProblem(rules)) return rules;
  drafts.push(...rules);
  const tls = tlsEntries(view, label);
  if (isProblem(tls)) return tls;
  return {
    namespace: view.namespace,
    name: view.name,
    createdAt: view.createdAt,
    annotations,
    // Annotations refused or not parsed leave every route out: served without them, a route
    // could be open that the Ingress closes.
    routes: read.blocking
      ? []
      : withOptions(drafts, read.options, tlsHostSet(view), label, findings),
    tls,
    findings,
    canary: canaryOf(read.options),
  };
}
