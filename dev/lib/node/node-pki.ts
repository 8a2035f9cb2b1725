/**
 * Key material of the real node, on top of the control plane's (cluster-pki.ts: CA, admin,
 * service-account key): a serving certificate for kube-apiserver valid for the node's
 * address and the `kubernetes` Service's ClusterIP (so Pods can call the API), kubelet's
 * serving and client certificates (system:node:<name>, for the Node authorizer), the API
 * server's client certificate towards kubelet (logs, exec), and one client certificate per
 * component (the identities Kubernetes' bootstrap RBAC policy already names).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateClusterPki, issue, type ClusterPki } from '../cluster-pki.ts';
import { renderKubeconfig } from '../kubeconfig.ts';
import { apiServiceAddress, nodeAddress, nodeName } from './node-network.ts';

export interface KeyPair {
  readonly cert: string;
  readonly key: string;
}

export interface NodePki {
  readonly cluster: ClusterPki;
  readonly apiServer: KeyPair;
  /** kube-apiserver → kubelet (logs, exec, port-forward). */
  readonly apiServerKubeletClient: KeyPair;
  readonly kubeletServing: KeyPair;
  /** Kubeconfigs of the admin and of each component, by component. */
  readonly kubeconfigs: Readonly<Record<NodeComponent, string>>;
}

export type NodeComponent =
  'admin' | 'kubelet' | 'kube-controller-manager' | 'kube-scheduler' | 'kube-proxy';

const clientUsage =
  'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\nbasicConstraints=critical,CA:FALSE\n';
const serverUsage =
  'extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\nbasicConstraints=critical,CA:FALSE\n';

/** Client identities: certificate subject of each component. */
const identities: Readonly<Record<Exclude<NodeComponent, 'admin'>, string>> = {
  kubelet: `/O=system:nodes/CN=system:node:${nodeName}`,
  'kube-controller-manager': '/CN=system:kube-controller-manager',
  'kube-scheduler': '/CN=system:kube-scheduler',
  'kube-proxy': '/CN=system:kube-proxy',
};

/** Generates everything into `dir/pki` and the kubeconfigs into `dir` (`<component>.kubeconfig`). */
export function generateNodePki(dir: string, server: string): NodePki {
  const pkiDir = join(dir, 'pki');
  mkdirSync(pkiDir, { recursive: true });
  const cluster = generateClusterPki(pkiDir);
  const ca = { cert: cluster.caCert, key: cluster.caKey };
  const apiServer = issue(
    pkiDir,
    'node-apiserver',
    '/CN=kube-apiserver',
    `subjectAltName=IP:${nodeAddress},IP:${apiServiceAddress},IP:127.0.0.1,DNS:localhost,` +
      'DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n' +
      serverUsage,
    ca,
  );
  const apiServerKubeletClient = issue(
    pkiDir,
    'apiserver-kubelet-client',
    '/O=system:masters/CN=kube-apiserver-kubelet-client',
    clientUsage,
    ca,
  );
  const kubeletServing = issue(
    pkiDir,
    'kubelet-serving',
    `/CN=${nodeName}`,
    `subjectAltName=IP:${nodeAddress},DNS:${nodeName}\n${serverUsage}`,
    ca,
  );
  const b64 = (path: string): string => readFileSync(path).toString('base64');
  const access = { server, caData: b64(cluster.caCert) };
  const write = (component: NodeComponent, user: string, pair: KeyPair): string => {
    const path = join(dir, `${component}.kubeconfig`);
    const credentials = { clientCertificateData: b64(pair.cert), clientKeyData: b64(pair.key) };
    writeFileSync(path, renderKubeconfig(access, user, credentials), { mode: 0o600 });
    return path;
  };
  const client = (component: keyof typeof identities): string =>
    write(component, component, issue(pkiDir, component, identities[component], clientUsage, ca));
  const kubeconfigs: Record<NodeComponent, string> = {
    admin: write('admin', 'haptic-node-admin', { cert: cluster.adminCert, key: cluster.adminKey }),
    kubelet: client('kubelet'),
    'kube-controller-manager': client('kube-controller-manager'),
    'kube-scheduler': client('kube-scheduler'),
    'kube-proxy': client('kube-proxy'),
  };
  return { cluster, apiServer, apiServerKubeletClient, kubeletServing, kubeconfigs };
}
