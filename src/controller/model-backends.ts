/**
 * Backends of the routing model: a Service port resolved to its EndpointSlices' ready
 * endpoints, each address checked for the slice's family (or as a DNS name in FQDN slices).
 * Servers are sorted, so the same slices give the same server lines.
 */
import { isIP } from 'node:net';
import { type ClusterSnapshot, type ServiceView, objectKey } from './cluster-snapshot.ts';
import type { ModelBackend, ModelServer } from './routing-model.ts';
import type { ServiceRef } from '../validation/validate-ingress.ts';

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function backendName(namespace: string, ref: ServiceRef): string {
  const port = 'number' in ref.port ? String(ref.port.number) : ref.port.name;
  return `${namespace}_${ref.name}_${port}`;
}

function servicePortName(service: ServiceView | undefined, ref: ServiceRef): string | undefined {
  const wanted = ref.port;
  const port =
    'number' in wanted
      ? service?.ports.find((p) => p.port === wanted.number)
      : service?.ports.find((p) => p.name === wanted.name);
  return port?.name;
}

export function buildBackend(
  snapshot: ClusterSnapshot,
  namespace: string,
  ref: ServiceRef,
): ModelBackend {
  const service = snapshot.services.get(objectKey(namespace, ref.name));
  const portName = servicePortName(service, ref);
  const servers = new Map<string, ModelServer>();
  if (portName !== undefined) {
    for (const slice of snapshot.endpointSlices.get(objectKey(namespace, ref.name)) ?? []) {
      const port = slice.ports.find((p) => p.name === portName)?.port;
      if (port === undefined || !Number.isInteger(port) || port < 1 || port > 65535) continue;
      for (const endpoint of slice.endpoints) {
        if (!endpoint.ready) continue;
        for (const address of endpoint.addresses) {
          if (!acceptedAddress(slice.addressType, address)) continue;
          const key = `${address}:${port}`;
          const endpoint = isIP(address) === 6 ? `[${address}]:${port}` : key;
          servers.set(key, { name: '', address, port, endpoint });
        }
      }
    }
  }
  const sorted = [...servers.entries()].sort(([a], [b]) => compare(a, b));
  return {
    name: backendName(namespace, ref),
    namespace,
    service: ref.name,
    servicePort: 'number' in ref.port ? String(ref.port.number) : ref.port.name,
    servers: sorted.map(([, server], i) => ({ ...server, name: `s${i + 1}` })),
  };
}

const dnsName =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/**
 * Addresses a server line may carry: IP addresses of their family, and DNS names in FQDN
 * slices, handed to HAProxy as written (it resolves them; a dotted IPv4 literal, which the
 * API accepts as a name, resolves to itself; the default template lets unresolvable names
 * start disabled).
 */
function acceptedAddress(addressType: string, address: string): boolean {
  if (addressType === 'IPv4') return isIP(address) === 4;
  if (addressType === 'IPv6') return isIP(address) === 6;
  return addressType === 'FQDN' && dnsName.test(address);
}
