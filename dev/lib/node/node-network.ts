/**
 * Where the real node lives on the network. The whole node (etcd, kube-apiserver, the
 * controllers, containerd, kubelet, kube-proxy and its Pods) runs in a network namespace of
 * its own, joined to this machine by one veth pair. That namespace has no default route, so
 * nothing in it can reach another machine whatever the host's forwarding settings; its
 * iptables rules, its bridge and its routes (the Service range routed `local`, so
 * kube-proxy's OUTPUT DNAT applies) disappear with it, and none of them can disturb the
 * host's own routes (local-routes.ts) that the shared control plane relies on.
 *
 * All addresses come from the local cluster's Pod range (cluster-network.ts), which the
 * egress guard of the test run treats as local: the veth link takes the last /30 of the
 * range, the node's Pods the /24 below it.
 */
import { podCidr, serviceCidr } from '../cluster-network.ts';

function parseCidr(cidr: string): { base: number; bits: number } {
  const [address = '', bits = ''] = cidr.split('/');
  const base = address.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
  return { base, bits: Number(bits) };
}

function formatAddress(value: number): string {
  return [24, 16, 8, 0].map((shift) => String(Math.floor(value / 2 ** shift) % 256)).join('.');
}

const pods = parseCidr(podCidr);
const rangeEnd = pods.base + 2 ** (32 - pods.bits);
const linkBase = rangeEnd - 4;
const podSubnetBase = rangeEnd - 512;

/** The node's name (kubelet --hostname-override, kube-proxy's hostnameOverride). */
export const nodeName = 'haptic-node';
/** The node's network namespace (`/run/netns/<name>`). */
export const nodeNetns = 'haptic-node';
/** The host's end of the veth pair; the node's end is `eth0` inside the namespace. */
export const hostInterface = 'hnode0';
/** The bridge the node's Pods are attached to (inside the namespace). */
export const podBridge = 'haptic0';
/** The host's address on the link (a /30). */
export const hostAddress = formatAddress(linkBase + 1);
/** The node's InternalIP: kube-apiserver listens and advertises here, kubelet serves here. */
export const nodeAddress = formatAddress(linkBase + 2);
export const linkPrefix = 30;
/** The node's Pods (bridge CNI, host-local IPAM); the host routes it to the node. */
export const podSubnet = `${formatAddress(podSubnetBase)}/24`;
/** The bridge's address: the Pods' default gateway. */
export const podGateway = formatAddress(podSubnetBase + 1);
/** The API server's port on the node's address. */
export const apiServerPort = 6443;
/** The `kubernetes` Service's ClusterIP (first address of the Service range). */
export const apiServiceAddress = formatAddress(parseCidr(serviceCidr).base + 1);
export { serviceCidr };
