/**
 * A real single-node Kubernetes cluster on this machine: etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, containerd (+ runc, bridge CNI), kubelet and
 * kube-proxy, all inside the node's own cgroup and network and mount namespaces
 * (node-host.sh), each under the usual watchdog (every process dies with its owner; the
 * holder then removes everything else). One node per machine.
 *
 * A part that exits on its own fails the node at once, naming the part and its log:
 * start-up rejects, and `guard()` rejects whatever the caller was waiting for.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { SupervisedProcess } from '../supervised-process.ts';
import {
  containerd,
  etcd,
  kubeApiServer,
  kubeControllerManager,
  kubelet,
  kubeProxy,
  kubeScheduler,
  type Component,
  type NodeFiles,
} from './node-components.ts';
import {
  nodeLayout,
  renderCniConfig,
  renderContainerdConfig,
  renderKubeletConfig,
  renderKubeProxyConfig,
  type NodeLayout,
} from './node-config.ts';
import { cleanNodeHost, holdNodeHost, nodeCgroup, type NodeHost } from './node-host.ts';
import { buildNodeImages, busyboxImage, importImage, pauseImage } from './node-images.ts';
import { apiServerPort, nodeAddress, nodeName } from './node-network.ts';
import { generateNodePki, type NodePki } from './node-pki.ts';
import { describeViolation, gatherHostFacts, nodePreflight } from './node-preflight.ts';

export interface NodeOptions {
  /** The node's directory: key material, configuration, state, `logs/`. Created if missing. */
  readonly dir: string;
  /** As in StartOptions: the process whose death stops the node. @default process.pid */
  readonly ownerPid?: number;
  /** @default 90_000 */
  readonly readyTimeoutMs?: number;
}

/** Milliseconds from the start of startNode(). */
export interface NodeTimings {
  readonly apiServerReady: number;
  readonly imagesImported: number;
  readonly nodeReady: number;
}

export interface RealNode {
  readonly dir: string;
  readonly layout: NodeLayout;
  readonly server: string;
  /** Admin kubeconfig (group system:masters). */
  readonly kubeconfigPath: string;
  /** Images present on the node (pull policy Never). */
  readonly images: { readonly busybox: string; readonly pause: string };
  /** The process holding the node's namespaces (`/proc/<pid>/ns/{net,mnt}` are the node's). */
  readonly anchorPid: number;
  /** The holder first, then the parts in start order. */
  readonly processes: readonly SupervisedProcess[];
  readonly timings: NodeTimings;
  /** Why the node failed (a part exited on its own), if it did. */
  failure(): string | undefined;
  /** `work`, rejected as soon as the node fails. */
  guard<T>(work: Promise<T>): Promise<T>;
  /** Imports an OCI archive (another image) into the node's containerd. */
  importImage(archive: string): Promise<void>;
  /** Stops every process of the node and removes everything it created on the machine. */
  stop(): Promise<void>;
}

function lastLines(file: string, count: number): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trim().split('\n').slice(-count).join('\n');
}

/** Tracks the node's processes: the first one to exit unasked fails the node. */
class Watch {
  readonly processes: SupervisedProcess[] = [];
  #stopping = false;
  #failure: string | undefined;
  #listeners: Array<(reason: string) => void> = [];
  readonly #logs: string;

  constructor(logs: string) {
    this.#logs = logs;
  }

  add(process: SupervisedProcess): SupervisedProcess {
    this.processes.push(process);
    void process.exited.then((code) => {
      if (this.#stopping || this.#failure !== undefined) return;
      const log = join(this.#logs, `${process.name}.log`);
      this.#failure = `${process.name} exited (code ${String(code)}); ${log} ends with:\n${lastLines(log, 5)}`;
      for (const listener of this.#listeners) listener(this.#failure);
    });
    return process;
  }

  failure(): string | undefined {
    return this.#failure;
  }

  guard<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = (reason: string): void => {
        reject(new Error(`The node failed: ${reason}`));
      };
      if (this.#failure !== undefined) {
        fail(this.#failure);
        return;
      }
      this.#listeners.push(fail);
      work.then(resolve, reject).finally(() => {
        this.#listeners = this.#listeners.filter((listener) => listener !== fail);
      });
    });
  }

  /** Polls `check` until it returns true, failing with `what` at the deadline or with the node. */
  async until(what: string, deadline: number, check: () => Promise<boolean>): Promise<void> {
    for (;;) {
      if (this.#failure !== undefined) throw new Error(`The node failed: ${this.#failure}`);
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) {
        throw new Error(`The node did not start: ${what} in time (logs: ${this.#logs})`);
      }
      await sleep(200);
    }
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    // The holder (first) kills every process of the node's cgroup and removes the rest; the
    // watchdogs of the parts then find their process gone and exit.
    for (const process of this.processes) await process.stop();
  }
}

/** GET on the API server with the admin certificate: the body when 200, else undefined. */
function apiGet(server: string, path: string, pki: NodePki): Promise<string | undefined> {
  return new Promise((resolve) => {
    const call = request(
      `${server}${path}`,
      {
        ca: readFileSync(pki.cluster.caCert),
        cert: readFileSync(pki.cluster.adminCert),
        key: readFileSync(pki.cluster.adminKey),
        timeout: 2000,
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          resolve(response.statusCode === 200 ? body : undefined);
        });
      },
    );
    call.on('timeout', () => call.destroy(new Error('timeout')));
    call.on('error', () => {
      resolve(undefined);
    });
    call.end();
  });
}

interface NodeCondition {
  readonly type?: string;
  readonly status?: string;
}

function nodeIsReady(body: string | undefined): boolean {
  if (body === undefined) return false;
  const node = JSON.parse(body) as { status?: { conditions?: NodeCondition[] } };
  return (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

function writeNodeFiles(layout: NodeLayout, pki: NodePki): NodeFiles {
  const files: NodeFiles = {
    containerdConfig: join(layout.dir, 'containerd.toml'),
    kubeletConfig: join(layout.dir, 'kubelet.yaml'),
    kubeProxyConfig: join(layout.dir, 'kube-proxy.yaml'),
  };
  const resolvConf = join(layout.dir, 'resolv.conf');
  // The node has no DNS server: Pods get an empty resolver configuration, not the host's.
  writeFileSync(resolvConf, '# no DNS inside the haptic node\n');
  writeFileSync(files.containerdConfig, renderContainerdConfig(layout, pauseImage));
  writeFileSync(join(layout.cniConfDir, '10-haptic-node.conflist'), renderCniConfig());
  writeFileSync(
    files.kubeletConfig,
    renderKubeletConfig(
      layout,
      {
        caCert: pki.cluster.caCert,
        servingCert: pki.kubeletServing.cert,
        servingKey: pki.kubeletServing.key,
        resolvConf,
      },
      nodeCgroup,
    ),
  );
  writeFileSync(files.kubeProxyConfig, renderKubeProxyConfig(pki.kubeconfigs['kube-proxy']));
  return files;
}

export async function startNode(options: NodeOptions): Promise<RealNode> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const violations = nodePreflight(gatherHostFacts());
  if (violations.length > 0) throw new Error(violations.map(describeViolation).join('\n'));

  const layout = nodeLayout(options.dir);
  for (const dir of [layout.logs, layout.cniConfDir, layout.images, layout.podLogs]) {
    mkdirSync(dir, { recursive: true });
  }
  const server = `https://${nodeAddress}:${String(apiServerPort)}`;
  const pki = generateNodePki(layout.dir, server);
  const files = writeNodeFiles(layout, pki);
  const archives = buildNodeImages(layout.images);

  const ownerPid = options.ownerPid ?? process.pid;
  const host: NodeHost = await holdNodeHost(join(layout.logs, 'node-host.log'), ownerPid);
  const watch = new Watch(layout.logs);
  watch.add(host.holder);
  const stop = async (): Promise<void> => {
    await watch.stop();
    // A holder that did not finish its own clean-up (killed, or dead before the stop) leaves
    // the sweep to be done here.
    if ((await host.holder.exited) !== 0) cleanNodeHost();
  };
  const start = (component: Component): SupervisedProcess =>
    watch.add(
      host.start({
        name: component.name,
        command: component.command,
        args: component.args,
        logFile: join(layout.logs, `${component.name}.log`),
        ownerPid,
      }),
    );
  const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
  let apiServerReady: number;
  let imagesImported = 0;
  try {
    start(etcd(layout));
    start(containerd(files));
    start(kubeApiServer(layout, pki));
    const images = (async () => {
      await watch.until('containerd did not answer on its socket', deadline, async () => {
        await promisify(execFile)('ctr', ['--address', layout.containerdSocket, 'version']);
        return true;
      });
      for (const archive of archives)
        await watch.guard(importImage(layout.containerdSocket, archive));
      imagesImported = elapsed();
    })();
    // Awaited below; until then a failure must not count as unhandled.
    images.catch(() => undefined);
    await watch.until(
      'kube-apiserver was not ready',
      deadline,
      async () => (await apiGet(server, '/readyz', pki)) === 'ok',
    );
    apiServerReady = elapsed();
    start(kubeControllerManager(pki));
    start(kubeScheduler(pki));
    start(kubeProxy(files));
    await images;
    start(kubelet(layout, pki, files));
    await watch.until(`node ${nodeName} did not become Ready`, deadline, async () =>
      nodeIsReady(await apiGet(server, `/api/v1/nodes/${nodeName}`, pki)),
    );
    // Pods can be created once the namespace has its ServiceAccount and root CA.
    await watch.until(
      'the default ServiceAccount did not appear',
      deadline,
      async () =>
        (await apiGet(server, '/api/v1/namespaces/default/serviceaccounts/default', pki)) !==
          undefined &&
        (await apiGet(server, '/api/v1/namespaces/default/configmaps/kube-root-ca.crt', pki)) !==
          undefined,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    dir: layout.dir,
    layout,
    server,
    kubeconfigPath: pki.kubeconfigs.admin,
    images: { busybox: busyboxImage, pause: pauseImage },
    anchorPid: host.anchorPid,
    processes: watch.processes,
    timings: { apiServerReady, imagesImported, nodeReady: elapsed() },
    failure: () => watch.failure(),
    guard: (work) => watch.guard(work),
    importImage: (archive) => watch.guard(importImage(layout.containerdSocket, archive)),
    stop,
  };
}
