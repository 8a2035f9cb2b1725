/**
 * The address ranges of the local cluster. Nothing on this machine owns them until the local
 * cluster does: kube-apiserver hands out Service ClusterIPs from `serviceCidr`, and the
 * project's own test hosts (network namespaces it creates) take addresses from `podCidr`.
 * Both are routed `unreachable` while a control plane runs (see local-routes.ts), so a packet
 * for an address nobody on this machine holds fails at once instead of leaving through the
 * default route. A network namespace's own, more specific route wins over that.
 */
export const serviceCidr = '10.96.0.0/16';
export const podCidr = '10.244.0.0/16';

/** Every range the local cluster claims, in the order the routes are added. */
export const clusterCidrs: readonly string[] = [serviceCidr, podCidr];
