/**
 * The command line of each part of the node (pure: the node's layout and key material in,
 * arguments out). All of them run inside the node's namespaces, so the ports are fixed.
 */
import { join } from 'node:path';
import type { NodeLayout } from './node-config.ts';
import { apiServerPort, nodeAddress, nodeName, podSubnet, serviceCidr } from './node-network.ts';
import type { NodePki } from './node-pki.ts';
import { pinnedToolBin } from '../tools.ts';

export interface Component {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
}

/** Files written beside the key material before the parts start. */
export interface NodeFiles {
  readonly containerdConfig: string;
  readonly kubeletConfig: string;
  readonly kubeProxyConfig: string;
}

const issuer = 'https://kubernetes.default.svc.cluster.local';

export function etcd(layout: NodeLayout): Component {
  return {
    name: 'etcd',
    command: pinnedToolBin('etcd'),
    args: [
      `--name=${nodeName}`,
      `--data-dir=${layout.etcdData}`,
      '--listen-client-urls=http://127.0.0.1:2379',
      '--advertise-client-urls=http://127.0.0.1:2379',
      '--listen-peer-urls=http://127.0.0.1:2380',
      '--initial-advertise-peer-urls=http://127.0.0.1:2380',
      `--initial-cluster=${nodeName}=http://127.0.0.1:2380`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
  };
}

/**
 * kube-apiserver on the node's address: Node and RBAC authorization, NodeRestriction, the
 * webhook admission plugins, client credentials towards kubelet (verified against the
 * cluster CA, reached by InternalIP), and the `kubernetes` Service's endpoints kept current.
 */
export function kubeApiServer(layout: NodeLayout, pki: NodePki): Component {
  const { cluster } = pki;
  return {
    name: 'kube-apiserver',
    command: pinnedToolBin('kube-apiserver'),
    args: [
      '--etcd-servers=http://127.0.0.1:2379',
      `--bind-address=${nodeAddress}`,
      `--advertise-address=${nodeAddress}`,
      `--secure-port=${String(apiServerPort)}`,
      `--cert-dir=${join(layout.dir, 'pki')}`,
      `--tls-cert-file=${pki.apiServer.cert}`,
      `--tls-private-key-file=${pki.apiServer.key}`,
      `--client-ca-file=${cluster.caCert}`,
      `--service-account-issuer=${issuer}`,
      `--service-account-key-file=${cluster.serviceAccountPublicKey}`,
      `--service-account-signing-key-file=${cluster.serviceAccountKey}`,
      `--api-audiences=${issuer}`,
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NamespaceLifecycle,ServiceAccount,NodeRestriction,ValidatingAdmissionWebhook,MutatingAdmissionWebhook,ValidatingAdmissionPolicy',
      `--service-cluster-ip-range=${serviceCidr}`,
      '--allow-privileged=true',
      `--kubelet-client-certificate=${pki.apiServerKubeletClient.cert}`,
      `--kubelet-client-key=${pki.apiServerKubeletClient.key}`,
      `--kubelet-certificate-authority=${cluster.caCert}`,
      '--kubelet-preferred-address-types=InternalIP',
    ],
  };
}

/**
 * The controllers (Deployments, ReplicaSets, Jobs, CronJobs, EndpointSlices, namespaces,
 * garbage collection, …) with a credential per controller; the ServiceAccount token and
 * root-CA publisher controllers give every namespace its `default` ServiceAccount and
 * `kube-root-ca.crt`.
 */
export function kubeControllerManager(pki: NodePki): Component {
  const kubeconfig = pki.kubeconfigs['kube-controller-manager'];
  return {
    name: 'kube-controller-manager',
    command: pinnedToolBin('kube-controller-manager'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--root-ca-file=${pki.cluster.caCert}`,
      `--service-account-private-key-file=${pki.cluster.serviceAccountKey}`,
      '--use-service-account-credentials=true',
      `--service-cluster-ip-range=${serviceCidr}`,
      // The node's Pod CIDR in spec.podCIDRs, as a cluster's node IPAM writes it (the
      // controller refuses endpoints outside the Nodes' Pod CIDRs): the one /24 its Pods use.
      '--allocate-node-cidrs=true',
      `--cluster-cidr=${podSubnet}`,
      '--node-cidr-mask-size=24',
      `--cluster-name=${nodeName}`,
      '--leader-elect=false',
    ],
  };
}

export function kubeScheduler(pki: NodePki): Component {
  const kubeconfig = pki.kubeconfigs['kube-scheduler'];
  return {
    name: 'kube-scheduler',
    command: pinnedToolBin('kube-scheduler'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      '--leader-elect=false',
    ],
  };
}

export function containerd(files: NodeFiles): Component {
  return { name: 'containerd', command: 'containerd', args: ['--config', files.containerdConfig] };
}

export function kubelet(layout: NodeLayout, pki: NodePki, files: NodeFiles): Component {
  return {
    name: 'kubelet',
    command: pinnedToolBin('kubelet'),
    args: [
      `--config=${files.kubeletConfig}`,
      `--kubeconfig=${pki.kubeconfigs.kubelet}`,
      `--root-dir=${layout.kubeletRoot}`,
      `--cert-dir=${join(layout.kubeletRoot, 'pki')}`,
      `--hostname-override=${nodeName}`,
      `--node-ip=${nodeAddress}`,
    ],
  };
}

export function kubeProxy(files: NodeFiles): Component {
  return {
    name: 'kube-proxy',
    command: pinnedToolBin('kube-proxy'),
    args: [`--config=${files.kubeProxyConfig}`],
  };
}
