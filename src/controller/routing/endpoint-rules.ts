/**
 * The endpoint rules of the cluster as the controller sees it (endpoint-addresses.ts): the
 * addresses of the release's own Pods and the Pod CIDRs of the Nodes, or the ranges the
 * values name. Pure; ClusterWatch feeds it its informers' objects and keeps one rules object
 * while nothing in it changes, so backends built under it are reused, and a change (a new
 * HAProxy Pod, a Node with another Pod CIDR) re-evaluates every backend.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { EndpointRules, OwnPod } from '../../validation/endpoint-addresses.ts';
import { parseCidr, parseIp } from '../../validation/ip-address.ts';

/** Where endpoint ranges come from (`--pod-cidrs`, `--allowed-endpoint-cidrs`). */
export interface EndpointRanges {
  /** The cluster's Pod CIDRs; absent: the Nodes' spec.podCIDRs (watched). */
  readonly podCIDRs?: readonly string[];
  /** Further ranges endpoints may use. @default [] */
  readonly allowedCIDRs?: readonly string[];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The release's own Pods with their addresses: every Pod that has one and has not finished.
 * Pods not Running yet count (HAProxy may listen before it is Ready), and so do Pods being
 * deleted (they listen until they are gone); a Succeeded or Failed Pod's address may already
 * belong to another Pod, so it does not.
 */
export function ownPodsOf(pods: readonly V1Pod[]): OwnPod[] {
  const own: OwnPod[] = [];
  for (const pod of pods) {
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    const addresses = new Set<string>();
    if ((pod.status?.podIP ?? '') !== '') addresses.add(pod.status?.podIP ?? '');
    for (const entry of pod.status?.podIPs ?? []) if (entry.ip !== '') addresses.add(entry.ip);
    const valid = [...addresses].filter((address) => parseIp(address) !== undefined).sort(compare);
    if (valid.length === 0) continue;
    const name = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
    own.push({ name, addresses: valid });
  }
  return own.sort((a, b) => compare(a.name, b.name));
}

/** The Pod CIDRs of the Nodes (spec.podCIDRs, else spec.podCIDR), each once, sorted. */
export function nodePodCIDRs(nodes: readonly V1Node[]): string[] {
  const cidrs = new Set<string>();
  for (const node of nodes) {
    const listed = node.spec?.podCIDRs ?? [];
    for (const cidr of listed.length > 0 ? listed : [node.spec?.podCIDR ?? '']) {
      if (typeof parseCidr(cidr) !== 'string') cidrs.add(cidr);
    }
  }
  return [...cidrs].sort(compare);
}

/** The rules from the own Pods, the Nodes (when the ranges name no Pod CIDRs) and the ranges. */
export function endpointRulesOf(
  pods: readonly V1Pod[],
  nodes: readonly V1Node[],
  ranges: EndpointRanges,
): EndpointRules {
  return {
    ownPods: ownPodsOf(pods),
    podCIDRs: ranges.podCIDRs ?? nodePodCIDRs(nodes),
    podCIDRsFrom: ranges.podCIDRs === undefined ? 'nodes' : 'value',
    allowedCIDRs: ranges.allowedCIDRs ?? [],
  };
}

/** Keeps one rules object while its content stays the same. */
export class KeptEndpointRules {
  #rules: EndpointRules;
  #text: string;

  constructor(initial: EndpointRules) {
    this.#rules = initial;
    this.#text = JSON.stringify(initial);
  }

  get current(): EndpointRules {
    return this.#rules;
  }

  /** Takes `next`; true when it differs from the rules kept (which it then replaces). */
  update(next: EndpointRules): boolean {
    const text = JSON.stringify(next);
    if (text === this.#text) return false;
    this.#rules = next;
    this.#text = text;
    return true;
  }
}
