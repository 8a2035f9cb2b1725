/**
 * Configuration files of the node's runtime parts, as pure renderers of the node's layout.
 * Every path the parts would otherwise take from their defaults (/var/lib/…, /etc/cni) is
 * set to the node's own directory; what they hard-code (/run/containerd, /var/lib/cni,
 * /var/log/containers) is a private tmpfs in the node's mount namespace (node-host.sh).
 */
import { join } from 'node:path';
import { stringify } from 'yaml';
import { nodeRunDir } from './node-host.ts';
import { nodeAddress, nodeName, podBridge, podGateway, podSubnet } from './node-network.ts';

/** Where a node keeps its state; everything under one directory except the socket. */
export interface NodeLayout {
  readonly dir: string;
  readonly logs: string;
  readonly containerdRoot: string;
  readonly containerdSocket: string;
  readonly cniConfDir: string;
  readonly kubeletRoot: string;
  readonly podLogs: string;
  readonly etcdData: string;
  readonly images: string;
}

/** Machine-wide like the node itself, and short: a Unix socket path has 107 bytes at most. */
export const containerdSocket = join(nodeRunDir, 'containerd.sock');

export function nodeLayout(dir: string): NodeLayout {
  return {
    dir,
    logs: join(dir, 'logs'),
    containerdRoot: join(dir, 'containerd'),
    containerdSocket,
    cniConfDir: join(dir, 'cni'),
    kubeletRoot: join(dir, 'kubelet'),
    podLogs: join(dir, 'pod-logs'),
    etcdData: join(dir, 'etcd'),
    images: join(dir, 'images'),
  };
}

/** The CNI plugins (Debian's containernetworking-plugins). */
export const cniBinDir = '/usr/lib/cni';
export const cniNetworkName = 'haptic-node';

/**
 * containerd: its own root, socket and cgroup-v1-friendly runc, the locally imported pause
 * image, and `restrict_oom_score_adj` (these machines refuse a negative oom_score_adj, and
 * without it every sandbox fails with `runc create failed: … can't get final child's PID`).
 */
export function renderContainerdConfig(layout: NodeLayout, pauseImage: string): string {
  return `version = 2
root = ${JSON.stringify(layout.containerdRoot)}
state = "/run/containerd"
# Plugins that would write outside the node's directories, or need what this machine lacks.
disabled_plugins = [
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
]

[grpc]
  address = ${JSON.stringify(layout.containerdSocket)}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${JSON.stringify(pauseImage)}
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${JSON.stringify(cniBinDir)}
    conf_dir = ${JSON.stringify(layout.cniConfDir)}
    max_conf_num = 1
`;
}

/** Bridge + host-local IPAM in the node's Pod subnet, portmap for hostPorts. */
export function renderCniConfig(): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: cniNetworkName,
      plugins: [
        {
          type: 'bridge',
          bridge: podBridge,
          isGateway: true,
          // Nothing leaves the node, so nothing needs masquerading.
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: podSubnet, gateway: podGateway }]],
            routes: [{ dst: '0.0.0.0/0' }],
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

export interface KubeletFiles {
  readonly caCert: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly resolvConf: string;
}

/**
 * kubelet: cgroup v1 accepted, swap tolerated, cgroupfs under the node's own cgroup, serving
 * on the node's address with client-certificate and webhook authentication and webhook
 * authorization (so `kubectl logs`/`exec` pass through the API server and nothing else
 * gets in), and no image garbage collection: an image it deleted could not be pulled again.
 */
export function renderKubeletConfig(
  layout: NodeLayout,
  files: KubeletFiles,
  cgroupRoot: string,
): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    failCgroupV1: false,
    failSwapOn: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${cgroupRoot}`,
    containerRuntimeEndpoint: `unix://${layout.containerdSocket}`,
    address: nodeAddress,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    tlsCertFile: files.servingCert,
    tlsPrivateKeyFile: files.servingKey,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: files.caCert },
    },
    authorization: { mode: 'Webhook' },
    clusterDomain: 'cluster.local',
    resolvConf: files.resolvConf,
    podLogsDir: layout.podLogs,
    // The images the node imports itself are never checked for pull credentials. The default
    // (NeverVerifyPreloadedImages) stops treating an imported image as preloaded once the
    // kubelet pulls the same image under another name (the published chart's image, by digest
    // from the local registry), and then tries to pull localhost/haptic, which no registry has.
    imagePullCredentialsVerificationPolicy: 'NeverVerifyAllowlistedImages',
    preloadedImagesVerificationAllowlist: ['localhost/*', 'haptic.local/*'],
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      'memory.available': '50Mi',
      'nodefs.available': '1%',
      'imagefs.available': '1%',
      'nodefs.inodesFree': '1%',
    },
    // The node reports its state quickly: tests wait for Ready and for Pod status.
    nodeStatusUpdateFrequency: '4s',
    nodeStatusReportFrequency: '10s',
    syncFrequency: '10s',
  });
}

/**
 * kube-proxy in iptables mode. It leaves the host-wide conntrack settings alone (they are
 * not per network namespace, and not writable from one) and does not open NodePorts on
 * 127.0.0.1 (that would need route_localnet).
 */
export function renderKubeProxyConfig(kubeconfig: string): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'iptables',
    clientConnection: { kubeconfig },
    hostnameOverride: nodeName,
    bindAddress: nodeAddress,
    healthzBindAddress: '127.0.0.1:10256',
    metricsBindAddress: '127.0.0.1:10249',
    clusterCIDR: podSubnet,
    nodePortAddresses: [`${nodeAddress}/32`],
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
    },
    iptables: { localhostNodePorts: false, minSyncPeriod: '0s', syncPeriod: '30s' },
  });
}
