import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { generateClusterPki, type ClusterPki } from './cluster-pki.ts';
import { clusterCidrs, serviceCidr } from './cluster-network.ts';
import { freePorts } from './free-port.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { holdUnreachableRoutes } from './local-routes.ts';
import { startSupervised, type SupervisedProcess } from './supervised-process.ts';
import { toolPath } from './tools.ts';

export interface ControlPlane {
  readonly dir: string;
  readonly server: string;
  /** Admin kubeconfig (group system:masters). */
  readonly kubeconfigPath: string;
  readonly pki: ClusterPki;
  readonly processes: readonly SupervisedProcess[];
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  /** Directory for certificates, etcd data, logs and the kubeconfig; created if missing. */
  readonly dir: string;
  /** See StartOptions.ownerPid: null leaves the processes running (`make cluster-up`). */
  readonly ownerPid?: number | null;
  /** @default 60_000 */
  readonly readyTimeoutMs?: number;
  /**
   * More kube-apiserver flags, after the defaults (a repeated flag's last value wins), for
   * example the admission configuration a test proves.
   * @default []
   */
  readonly extraApiServerArgs?: readonly string[];
}

/**
 * Starts a real etcd and kube-apiserver on free loopback ports: generated serving
 * certificates, service-account issuer and keys (TokenRequest works), RBAC authorization,
 * the ValidatingAdmissionWebhook plugin. Nothing runs Pods: there is no scheduler, kubelet
 * or controller-manager (the hook-Job runner stands in for the Job controller).
 *
 * Before anything starts, the cluster's Service and Pod ranges are routed `unreachable`
 * (local-routes.ts): a call to a ClusterIP (kube-apiserver calling a webhook through its
 * Service) fails at once with "no route to host" instead of leaving the machine.
 */
export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { dir } = options;
  mkdirSync(join(dir, 'pki'), { recursive: true });
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const pki = generateClusterPki(join(dir, 'pki'));
  const [etcdClient, etcdPeer, apiPort] = await freePorts(3);
  const owner = options.ownerPid === undefined ? {} : { ownerPid: options.ownerPid };
  const routes = await holdUnreachableRoutes(
    clusterCidrs,
    join(dir, 'logs', 'cluster-routes.log'),
    options.ownerPid,
  );

  const etcd = startSupervised({
    name: 'etcd',
    command: toolPath('etcd'),
    args: [
      '--name=haptic-dev',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=haptic-dev=http://127.0.0.1:${etcdPeer}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    logFile: join(dir, 'logs', 'etcd.log'),
    ...owner,
  });
  const server = `https://127.0.0.1:${apiPort}`;
  const apiserver = startSupervised({
    name: 'kube-apiserver',
    command: toolPath('kube-apiserver'),
    args: [
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--cert-dir=${join(dir, 'pki')}`,
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      `--client-ca-file=${pki.caCert}`,
      `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
      `--service-account-key-file=${pki.serviceAccountPublicKey}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      '--api-audiences=https://kubernetes.default.svc.cluster.local',
      '--authorization-mode=RBAC',
      '--enable-admission-plugins=NamespaceLifecycle,ServiceAccount,ValidatingAdmissionWebhook,MutatingAdmissionWebhook,ValidatingAdmissionPolicy',
      `--service-cluster-ip-range=${serviceCidr}`,
      '--allow-privileged=true',
      '--endpoint-reconciler-type=none',
      '--v=0',
      ...(options.extraApiServerArgs ?? []),
    ],
    logFile: join(dir, 'logs', 'kube-apiserver.log'),
    ...owner,
  });
  const processes = [routes, etcd, apiserver];
  const stop = async (): Promise<void> => {
    await apiserver.stop();
    await etcd.stop();
    await routes.stop();
  };

  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, adminKubeconfig(server, pki), { mode: 0o600 });
  try {
    await waitReady(server, pki, options.readyTimeoutMs ?? 60_000, processes);
  } catch (error) {
    await stop();
    throw error;
  }
  return { dir, server, kubeconfigPath, pki, processes, stop };
}

function adminKubeconfig(server: string, pki: ClusterPki): string {
  const b64 = (path: string): string => readFileSync(path).toString('base64');
  return renderKubeconfig({ server, caData: b64(pki.caCert) }, 'haptic-dev-admin', {
    clientCertificateData: b64(pki.adminCert),
    clientKeyData: b64(pki.adminKey),
  });
}

async function waitReady(
  server: string,
  pki: ClusterPki,
  timeoutMs: number,
  processes: readonly SupervisedProcess[],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: string | undefined;
  for (const p of processes) {
    void p.exited.then(() => {
      exited = p.name;
    });
  }
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (exited !== undefined) {
      throw new Error(`${exited} exited during start-up; see its log under logs/`);
    }
    last = await probe(`${server}/readyz`, pki).catch((error: unknown) => String(error));
    if (last === 'ok') return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`kube-apiserver not ready after ${timeoutMs} ms: ${last}`);
}

function probe(url: string, pki: ClusterPki): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        ca: readFileSync(pki.caCert),
        cert: readFileSync(pki.adminCert),
        key: readFileSync(pki.adminKey),
        timeout: 2000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          resolve(res.statusCode === 200 ? body.trim() : `HTTP ${res.statusCode}: ${body}`);
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}
