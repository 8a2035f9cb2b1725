import type { PinnedTool } from '../tools.ts';

/** The pinned tools a node runs (node-preflight.ts checks each is built). */
export const nodeTools: readonly PinnedTool[] = [
  'etcd',
  'kube-apiserver',
  'kubectl',
  'kube-controller-manager',
  'kube-scheduler',
  'kubelet',
  'kube-proxy',
];
