/**
 * What the controller renders from: the watched objects, reduced to the fields rendering
 * needs. Built from the informers' caches (or, for admission, from those caches with one
 * object replaced). Plain data, so the routing model stays pure.
 */
import { type EndpointRules, anyRangeEndpointRules } from '../../validation/endpoint-addresses.ts';
import type { IngressView } from '../../validation/ingress-view.ts';

export interface ServicePortView {
  readonly name: string;
  readonly port: number;
  /** spec.ports[].appProtocol: the backend protocol when no backend-protocol annotation says. */
  readonly appProtocol?: string;
}

export interface ServiceView {
  readonly namespace: string;
  readonly name: string;
  readonly ports: readonly ServicePortView[];
  /** spec.externalName of a Service of type ExternalName: served as one FQDN endpoint. */
  readonly externalName?: string;
}

export interface EndpointSliceView {
  readonly namespace: string;
  readonly name: string;
  /** kubernetes.io/service-name label. */
  readonly serviceName: string;
  /** IPv4, IPv6 or FQDN. */
  readonly addressType: string;
  readonly ports: readonly { readonly name: string; readonly port: number }[];
  readonly endpoints: readonly { readonly addresses: readonly string[]; readonly ready: boolean }[];
}

export interface SecretView {
  readonly namespace: string;
  readonly name: string;
  /** base64 values, as the API carries them. */
  readonly data: Readonly<Record<string, string>>;
}

/** What the controller's resolver found for one FQDN endpoint name. */
export type NameResolution = { readonly addresses: readonly string[] } | { readonly error: string };

export interface ClusterSnapshot {
  /** Ingresses of our class only. */
  readonly ingresses: readonly IngressView[];
  /** By `namespace/name`. */
  readonly services: ReadonlyMap<string, ServiceView>;
  /** By `namespace/serviceName`. */
  readonly endpointSlices: ReadonlyMap<string, readonly EndpointSliceView[]>;
  /** By `namespace/name`. */
  readonly secrets: ReadonlyMap<string, SecretView>;
  /**
   * FQDN endpoints: `disabled` when the controller serves none (`--fqdn-endpoints=false`);
   * otherwise what each name used by a backend resolved to. A name not resolved yet is absent.
   * The model renders these addresses, never the names, so HAProxy cannot resolve a name
   * differently from what was checked.
   */
  readonly fqdnNames: 'disabled' | ReadonlyMap<string, NameResolution>;
  /**
   * What endpoint addresses are refused besides the fixed ranges: the release's own Pods, and
   * addresses outside the Pod CIDRs and allowed ranges (endpoint-addresses.ts). The same
   * object while nothing in it changes, so backends built under it are kept.
   */
  readonly endpointRules: EndpointRules;
}

/**
 * A cluster without Ingresses, Services, EndpointSlices or Secrets, whose endpoints are
 * refused by the fixed ranges only.
 */
export const emptySnapshot: ClusterSnapshot = {
  ingresses: [],
  services: new Map(),
  endpointSlices: new Map(),
  secrets: new Map(),
  fqdnNames: new Map(),
  endpointRules: anyRangeEndpointRules,
};

export function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}
