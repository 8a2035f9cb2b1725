/**
 * Backends of the routing model: a Service port resolved to its EndpointSlices' ready
 * endpoints. Every server address is an IP address checked by `endpointRefusal` under the
 * snapshot's endpoint rules (IPv4 and IPv6 slices as written, FQDN slices as the controller
 * resolved them), so HAProxy never resolves a name itself, never proxies to its own host or
 * Pods, and never leaves the ranges endpoints may use. Servers are sorted, so the same slices
 * give the same server lines.
 */
import { isIP } from 'node:net';
import {
  type ClusterSnapshot,
  type EndpointSliceView,
  type ServicePortView,
  type ServiceView,
  objectKey,
} from './cluster-snapshot.ts';
import { appProtocolOf } from '../../annotations/annotation-values.ts';
import { type EndpointRefusal, endpointRefusal } from '../../validation/endpoint-addresses.ts';
import { serverSlots } from './server-slots.ts';
import { type ModelWarning, ingressEventReasons } from './ingress-event-reasons.ts';
import type { ModelBackend, ModelServer } from './model-types.ts';
import type { BackendView, IngressView } from '../../validation/ingress-view.ts';
import type { ServiceRef } from '../../validation/validate-ingress.ts';
import { type BackendOptions, plainBackendOptions } from '../../annotations/route-options.ts';

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function portText(ref: ServiceRef): string {
  return 'number' in ref.port ? String(ref.port.number) : ref.port.name;
}

/**
 * `<namespace>:<service>:<port>`. Namespaces, Service names and port names are DNS labels
 * (checked by validateIngress) and port numbers are digits, none of which contains `:`, so
 * the name splits back into its three parts: two backends never share a name. Templates'
 * own backends (`haptic_not_found`) contain no `:`, so they never collide with these either.
 * HAProxy accepts `:` in proxy names; the longest name is 63 + 1 + 63 + 1 + 63 characters.
 */
export function backendName(namespace: string, ref: ServiceRef): string {
  return `${namespace}:${ref.name}:${portText(ref)}`;
}

/**
 * The backend of a Service port for routes asking `options`: `backendName`, then `:` and the
 * options' key unless they are the defaults. Keys are hex digits, so a variant's name has a
 * fourth part no plain name has: no two backends share a name.
 */
export function variantName(namespace: string, ref: ServiceRef, options: BackendOptions): string {
  const name = backendName(namespace, ref);
  return options.key === '' ? name : `${name}:${options.key}`;
}

const variants = new WeakMap<BackendResult, Map<string, BackendResult>>();

/**
 * The backend of `result`'s Service port for routes asking `options`: the same servers and
 * slots under the variant's name, one object per built backend and options.
 */
export function backendVariant(result: BackendResult, options: BackendOptions): BackendResult {
  if (options.key === '') return result;
  let byKey = variants.get(result);
  if (byKey === undefined) {
    byKey = new Map();
    variants.set(result, byKey);
  }
  let variant = byKey.get(options.key);
  if (variant === undefined) {
    const { backend } = result;
    variant = {
      backend: {
        ...backend,
        name: `${backend.name}:${options.key}`,
        options,
        protocol: options.protocol ?? backend.protocol,
      },
      problems: result.problems,
    };
    byKey.set(options.key, variant);
  }
  return variant;
}

function servicePort(
  service: ServiceView | undefined,
  ref: ServiceRef,
): ServicePortView | undefined {
  const wanted = ref.port;
  return 'number' in wanted
    ? service?.ports.find((p) => p.port === wanted.number)
    : service?.ports.find((p) => p.name === wanted.name);
}

/** An endpoint left out, with why: an EndpointRefused or EndpointUnresolved warning. */
export type EndpointProblem = Omit<ModelWarning, 'ingress'>;

export interface BackendResult {
  readonly backend: ModelBackend;
  readonly problems: readonly EndpointProblem[];
}

/**
 * Most servers one backend gets. EndpointSlices are written by whoever may write them in the
 * Service's namespace, up to 1,000 endpoints of 100 addresses each per slice, and nothing else
 * bounds them: 210,000 addresses made a backend of 524,288 slots and a haproxy.cfg over the
 * agents' 16 MiB limit, which failed the whole configuration, every tenant's included. 4,096
 * servers take 8,192 slots, about 0.4 MB of configuration.
 */
export const maxServersPerBackend = 4096;

const dnsName =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/**
 * The FQDN endpoint names the backends of these Ingresses may use: ready endpoints of FQDN
 * slices of every Service an Ingress names, and the external names of those of type
 * ExternalName (a superset of what the model renders, so that only names of our Ingresses'
 * Services are ever resolved).
 */
export function fqdnNamesInUse(
  ingresses: readonly IngressView[],
  endpointSlices: ClusterSnapshot['endpointSlices'],
  servicesByKey: ClusterSnapshot['services'] = new Map(),
): Set<string> {
  const services = new Set<string>();
  const add = (namespace: string, backend: BackendView | undefined): void => {
    if (backend?.serviceName !== undefined) services.add(objectKey(namespace, backend.serviceName));
  };
  for (const ingress of ingresses) {
    add(ingress.namespace, ingress.defaultBackend);
    for (const rule of ingress.rules) {
      for (const path of rule.paths) add(ingress.namespace, path.backend);
    }
  }
  const names = new Set<string>();
  for (const service of services) {
    const externalName = servicesByKey.get(service)?.externalName;
    if (externalName !== undefined && dnsName.test(externalName)) names.add(externalName);
    for (const slice of endpointSlices.get(service) ?? []) {
      if (slice.addressType !== 'FQDN') continue;
      for (const endpoint of slice.endpoints) {
        if (!endpoint.ready) continue;
        for (const address of endpoint.addresses) if (dnsName.test(address)) names.add(address);
      }
    }
  }
  return names;
}

/** The IP addresses an endpoint address stands for, or the problem with it. */
function endpointAddresses(
  snapshot: ClusterSnapshot,
  slice: EndpointSliceView,
  address: string,
  where: string,
): { readonly addresses: readonly string[] } | { readonly problem: EndpointProblem | undefined } {
  const family = slice.addressType === 'IPv4' ? 4 : slice.addressType === 'IPv6' ? 6 : 0;
  if (family !== 0) return { addresses: isIP(address) === family ? [address] : [] };
  if (slice.addressType !== 'FQDN' || !dnsName.test(address)) return { addresses: [] };
  if (snapshot.fqdnNames === 'disabled') {
    return {
      problem: {
        reason: ingressEventReasons.EndpointRefused,
        message: `${where} is of type FQDN, and this controller serves no FQDN endpoints (--fqdn-endpoints=false); its endpoints are left out. List IP addresses in an IPv4 or IPv6 EndpointSlice instead.`,
      },
    };
  }
  const resolved = snapshot.fqdnNames.get(address);
  if (resolved === undefined) return { problem: undefined };
  if ('error' in resolved) {
    return {
      problem: {
        reason: ingressEventReasons.EndpointUnresolved,
        message: `${where} names ${address}, which does not resolve (${resolved.error}); it is left out until it does. Fix the name or its DNS records.`,
      },
    };
  }
  return { addresses: resolved.addresses };
}

/** Addresses named in one refusal's message; the rest are counted. */
const addressesNamed = 3;

/**
 * Refused addresses, one problem per slice and reason: a slice of a thousand addresses outside
 * the Pod CIDRs gives one sentence naming a few of them, not a thousand.
 */
class RefusedAddresses {
  readonly #groups = new Map<
    string,
    { readonly where: string; readonly refusal: EndpointRefusal; readonly addresses: string[] }
  >();

  add(where: string, address: string, refusal: EndpointRefusal): void {
    const key = `${where}\n${refusal.why}\n${refusal.fix}`;
    const group = this.#groups.get(key);
    if (group === undefined) this.#groups.set(key, { where, refusal, addresses: [address] });
    else group.addresses.push(address);
  }

  problems(): EndpointProblem[] {
    return [...this.#groups.values()].map(({ where, refusal, addresses }) => {
      const named = addresses.slice(0, addressesNamed).join(', ');
      const more = addresses.length - addressesNamed;
      const list = more > 0 ? `${named} and ${String(more)} more addresses` : named;
      return {
        reason: ingressEventReasons.EndpointRefused,
        message: `${where} lists ${list}, ${refusal.why}; HAProxy does not send traffic there. ${refusal.fix}`,
      };
    });
  }
}

/**
 * A Service of type ExternalName as one FQDN slice: its external name, on the port the Ingress
 * names (a number, or the Service's port of that name), resolved and checked like any FQDN
 * endpoint (ExternalName Services have no EndpointSlices). Undefined for other Services.
 */
function externalNameSlice(service: ServiceView, ref: ServiceRef): EndpointSliceView | undefined {
  if (service.externalName === undefined) return undefined;
  const wanted = ref.port;
  const port =
    'number' in wanted ? wanted.number : service.ports.find((p) => p.name === wanted.name)?.port;
  return {
    namespace: service.namespace,
    name: service.name,
    serviceName: service.name,
    addressType: 'FQDN',
    ports: port === undefined ? [] : [{ name: '', port }],
    endpoints: [{ addresses: [service.externalName], ready: true }],
  };
}

/**
 * The backend for one Service port, and the endpoints it leaves out. Endpoints not ready,
 * of another family than their slice, or of an FQDN name not resolved yet are skipped
 * silently (the API server or the next resolution fixes them).
 */
export function buildBackend(
  snapshot: ClusterSnapshot,
  namespace: string,
  ref: ServiceRef,
): BackendResult {
  const service = snapshot.services.get(objectKey(namespace, ref.name));
  const portView = servicePort(service, ref);
  const portName = portView?.name;
  const servers = new Map<string, ModelServer>();
  const problems: EndpointProblem[] = [];
  const refused = new RefusedAddresses();
  const external = service === undefined ? undefined : externalNameSlice(service, ref);
  const slices =
    external !== undefined
      ? [external]
      : portName === undefined
        ? []
        : snapshot.endpointSlices.get(objectKey(namespace, ref.name));
  for (const slice of slices ?? []) {
    const port = slice.ports.find((p) => p.name === (external !== undefined ? '' : portName))?.port;
    if (port === undefined || !Number.isInteger(port) || port < 1 || port > 65535) continue;
    const where =
      external !== undefined
        ? `Service ${objectKey(namespace, ref.name)} (type ExternalName)`
        : `EndpointSlice ${objectKey(slice.namespace, slice.name)} of Service ${objectKey(namespace, ref.name)}`;
    for (const endpoint of slice.endpoints) {
      if (!endpoint.ready) continue;
      for (const written of endpoint.addresses) {
        const found = endpointAddresses(snapshot, slice, written, where);
        if ('problem' in found) {
          if (found.problem !== undefined) problems.push(found.problem);
          continue;
        }
        for (const address of found.addresses) {
          const refusal = endpointRefusal(address, snapshot.endpointRules);
          if (refusal !== undefined) {
            const source = address === written ? '' : ` (${written} resolves to it)`;
            refused.add(where, `${address}${source}`, refusal);
            continue;
          }
          const key = `${address}:${port}`;
          const endpointText = isIP(address) === 6 ? `[${address}]:${port}` : key;
          servers.set(key, { name: '', address, port, endpoint: endpointText });
        }
      }
    }
  }
  problems.push(...refused.problems());
  const sorted = [...servers.entries()].sort(([a], [b]) => compare(a, b));
  if (sorted.length > maxServersPerBackend) {
    problems.push({
      reason: ingressEventReasons.EndpointRefused,
      message: `Service ${objectKey(namespace, ref.name)} has ${String(sorted.length)} ready endpoints for port ${portText(ref)}, more than the ${String(maxServersPerBackend)} one backend serves; the first ${String(maxServersPerBackend)} in address order get traffic. Scale it down, or split it into several Services.`,
    });
  }
  const named = sorted
    .slice(0, maxServersPerBackend)
    .map(([, server], i) => ({ ...server, name: `s${i + 1}` }));
  return {
    backend: {
      name: backendName(namespace, ref),
      namespace,
      service: ref.name,
      servicePort: portText(ref),
      servers: named,
      slots: serverSlots(named),
      options: plainBackendOptions,
      protocol: appProtocolOf(portView?.appProtocol) ?? 'HTTP',
    },
    problems,
  };
}

interface KeptBackend {
  readonly service: ServiceView | undefined;
  readonly slices: readonly EndpointSliceView[] | undefined;
  readonly fqdnNames: ClusterSnapshot['fqdnNames'];
  readonly endpointRules: ClusterSnapshot['endpointRules'];
  readonly result: BackendResult;
}

/**
 * Backends of the last two snapshots built, reused for a Service port whose Service view,
 * EndpointSlice views, FQDN resolutions and endpoint rules are the very objects they were
 * built from (views are immutable, so the same objects give the same backend). A snapshot
 * that rebuilds its views builds every backend again.
 */
export class KeptBackends {
  #snapshot: ClusterSnapshot | undefined;
  #current = new Map<string, KeptBackend>();
  #previous = new Map<string, KeptBackend>();

  build(snapshot: ClusterSnapshot, namespace: string, ref: ServiceRef): BackendResult {
    if (snapshot !== this.#snapshot) {
      this.#snapshot = snapshot;
      this.#previous = this.#current;
      this.#current = new Map();
    }
    const name = backendName(namespace, ref);
    const service = snapshot.services.get(objectKey(namespace, ref.name));
    const slices = snapshot.endpointSlices.get(objectKey(namespace, ref.name));
    const kept = this.#current.get(name) ?? this.#previous.get(name);
    if (
      kept !== undefined &&
      kept.service === service &&
      kept.slices === slices &&
      kept.fqdnNames === snapshot.fqdnNames &&
      kept.endpointRules === snapshot.endpointRules
    ) {
      this.#current.set(name, kept);
      return kept.result;
    }
    const result = buildBackend(snapshot, namespace, ref);
    this.#current.set(name, {
      service,
      slices,
      fqdnNames: snapshot.fqdnNames,
      endpointRules: snapshot.endpointRules,
      result,
    });
    return result;
  }
}
