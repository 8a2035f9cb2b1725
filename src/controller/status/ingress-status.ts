/**
 * The address every served Ingress carries in `status.loadBalancer.ingress` (what `kubectl get
 * ingress` shows as ADDRESS), and the status writes that bring Ingresses to it. As
 * ingress-nginx does with `--publish-service` and `--publish-status-address`: the address of
 * the Service in front of HAProxy, or addresses given outright. Pure.
 */
import { isIP } from 'node:net';
import type { V1Service } from '@kubernetes/client-node';

/** One entry of `status.loadBalancer.ingress`: an IP address or a DNS name. */
export type LoadBalancerAddress = { readonly ip: string } | { readonly hostname: string };

/** What the status writer should do: publish the address on `set`, remove ours from `clear`. */
export interface StatusWrites {
  readonly set: readonly string[];
  readonly clear: readonly string[];
}

/** An Ingress as listed: `namespace/name` and its current `status.loadBalancer.ingress`. */
export interface ListedIngressStatus {
  readonly key: string;
  readonly addresses: readonly {
    readonly ip?: string | undefined;
    readonly hostname?: string | undefined;
  }[];
}

/** A lower-case DNS name (RFC 1123 subdomain), as the API server accepts for `hostname`. */
const dnsName =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

function addressOf(text: string): LoadBalancerAddress {
  return isIP(text) === 0 ? { hostname: text } : { ip: text };
}

/** Entries as the API carries them, reduced to `ip` or `hostname` (ip first). */
function normalized(
  entries: readonly { readonly ip?: string | undefined; readonly hostname?: string | undefined }[],
): LoadBalancerAddress[] {
  return entries.flatMap((entry): LoadBalancerAddress[] =>
    entry.ip !== undefined && entry.ip !== ''
      ? [{ ip: entry.ip }]
      : entry.hostname !== undefined && entry.hostname !== ''
        ? [{ hostname: entry.hostname }]
        : [],
  );
}

/**
 * `--publish-status-address`: comma-separated IP addresses or DNS names; the list, or a
 * sentence naming the entry that is neither.
 */
export function parseStatusAddresses(text: string): LoadBalancerAddress[] | string {
  const entries = text.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (isIP(entry) === 0 && !dnsName.test(entry)) {
      return `"${entry}" is neither an IP address nor a lower-case DNS name; write for example 203.0.113.10,lb.example.com.`;
    }
  }
  return entries.map(addressOf);
}

/**
 * The address of the Service in front of HAProxy: its load balancer's addresses once the
 * cloud has assigned them, else its external IPs, else its cluster IPs; an ExternalName
 * Service's name. Empty for a headless Service without any of these.
 */
export function serviceAddresses(service: V1Service): LoadBalancerAddress[] {
  const spec = service.spec;
  if (spec?.type === 'ExternalName') {
    return spec.externalName === undefined || spec.externalName === ''
      ? []
      : [{ hostname: spec.externalName }];
  }
  const balancer = normalized(service.status?.loadBalancer?.ingress ?? []);
  if (balancer.length > 0) return balancer;
  const external = (spec?.externalIPs ?? []).map((ip) => ({ ip }));
  if (external.length > 0) return external;
  const clusterIPs = spec?.clusterIPs ?? (spec?.clusterIP === undefined ? [] : [spec.clusterIP]);
  return clusterIPs.filter((ip) => ip !== '' && ip !== 'None').map((ip) => ({ ip }));
}

export function sameAddresses(
  a: readonly LoadBalancerAddress[],
  b: readonly LoadBalancerAddress[],
): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * What a new leader knows from one list of every Ingress: the status of each served one (to
 * write only where it differs), and the Ingresses not served that carry exactly our address
 * (set by an earlier leader, to be cleared). Other addresses belong to other controllers.
 */
export function knownStatuses(
  listed: readonly ListedIngressStatus[],
  served: ReadonlySet<string>,
  address: readonly LoadBalancerAddress[],
): Map<string, LoadBalancerAddress[]> {
  const known = new Map<string, LoadBalancerAddress[]>();
  for (const ingress of listed) {
    const addresses = normalized(ingress.addresses);
    if (served.has(ingress.key) || (addresses.length > 0 && sameAddresses(addresses, address))) {
      known.set(ingress.key, addresses);
    }
  }
  return known;
}

/**
 * The writes from what Ingresses carry (`known`: our writes and the leader's first list) to
 * the goal: every served Ingress carries `address`, no other Ingress carries one of ours.
 */
export function statusWrites(
  known: ReadonlyMap<string, readonly LoadBalancerAddress[]>,
  served: ReadonlySet<string>,
  address: readonly LoadBalancerAddress[],
): StatusWrites {
  const set = [...served].filter((key) => !sameAddresses(known.get(key) ?? [], address)).sort();
  const clear = [...known]
    .filter(([key, addresses]) => !served.has(key) && addresses.length > 0)
    .map(([key]) => key)
    .sort();
  return { set, clear };
}
