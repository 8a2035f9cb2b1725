import { projectRoot } from '../tools.ts';

/** The pinned Kubernetes parts a node runs, beyond what tools.ts names. */
export type NodeTool =
  | 'etcd'
  | 'kube-apiserver'
  | 'kubectl'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubelet'
  | 'kube-proxy';

export const nodeTools: readonly NodeTool[] = [
  'etcd',
  'kube-apiserver',
  'kubectl',
  'kube-controller-manager',
  'kube-scheduler',
  'kubelet',
  'kube-proxy',
];

/** Path of a pinned tool in .tools/bin (dev/install-tools.sh); existence is preflight's job. */
export function nodeToolPath(name: NodeTool): string {
  return `${projectRoot}.tools/bin/${name}`;
}
