/**
 * A release of the chart installed in a test namespace of the run's node (hooks run as real
 * Jobs), its two haptic-haproxy replicas and its controller replicas run locally exactly as the
 * Deployments say (dev/local-pods; the Deployments' own Pods stay Pending: their nodeSelector
 * matches no node), and sample backends: small HTTP servers on test hosts (network
 * namespaces, dev/lib/netns-host.ts) exposed through a Service and an IPv4 EndpointSlice. Each
 * site uses its own 127.x.y.0/24 addresses and its own IngressClass, so test files running in
 * parallel never see each other.
 */
import { randomInt } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ControllerReplica,
  type HAProxyReplica,
  controllerReplica,
  startHAProxyReplica,
} from '../../../dev/local-pods/release-pods.ts';
import { type NetnsHost, startNetnsHost } from '../../../dev/lib/netns-host.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { adminKubeConfig, createTestNamespace, helm, kubectl } from '../../support/cluster.ts';
import { selfSignedCertificate } from '../../support/self-signed.ts';

export interface Backend {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly host: NetnsHost;
}

export interface Answer {
  readonly status: number;
  readonly body: string;
}

export async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  let error: unknown;
  while (Date.now() < deadline) {
    try {
      last = await read();
      if (ok(last)) return last;
    } catch (caught) {
      error = caught;
    }
    await sleep(100);
  }
  throw new Error(
    `${what}: last ${JSON.stringify(last)} ${error instanceof Error ? error.message : ''}`,
  );
}

/** Keeps the Deployments' Pods off the node (Pending), so only the local replicas run. */
const localPodsOnly = ['controller', 'haproxy'].flatMap((component) => [
  '--set',
  `${component}.nodeSelector.haptic-test=local-pods`,
]);

export class LocalSite {
  readonly namespace: string;
  readonly ingressClass: string;
  readonly subnet: string;
  readonly dir: string;
  readonly replicas: HAProxyReplica[] = [];
  readonly controllers: ControllerReplica[] = [];
  readonly backends: Backend[] = [];

  private constructor(namespace: string, subnet: string) {
    this.namespace = namespace;
    this.ingressClass = namespace;
    this.subnet = subnet;
    this.dir = mkdtempSync(join(tmpdir(), `haptic-site-${namespace}-`));
  }

  /** Installs the chart and starts two HAProxy replicas and `controllers` controllers. */
  static async start(
    prefix: string,
    controllers = 1,
    extraArgs: readonly string[] = [],
  ): Promise<LocalSite> {
    const namespace = await createTestNamespace(prefix);
    const site = new LocalSite(namespace, `127.${randomInt(10, 250)}.${randomInt(1, 250)}`);
    const install = await helm([
      'install',
      'haptic',
      join(projectRoot, 'chart'),
      '-n',
      namespace,
      '--set',
      `ingressClass.name=${site.ingressClass}`,
      ...localPodsOnly,
      '--timeout',
      '2m',
    ]);
    if (install.exitCode !== 0) throw new Error(`helm install failed: ${install.stderr}`);
    const options = { kubeConfig: adminKubeConfig(), namespace, dir: site.dir };
    for (const i of [0, 1]) {
      site.replicas.push(
        await startHAProxyReplica(options, `haptic-haproxy-${i}`, `${site.subnet}.${2 + i}`),
      );
    }
    for (let i = 0; i < controllers; i += 1) {
      const controller = await controllerReplica(
        options,
        `haptic-controller-${i}`,
        `${site.subnet}.${11 + i}`,
        {
          agents: site.replicas,
          extraArgs: ['--agent-sync-interval=1', ...extraArgs],
        },
      );
      site.controllers.push(controller);
      await controller.start();
    }
    return site;
  }

  /**
   * A test host answering `<name> <path>` (its own network namespace, reached through a veth),
   * with a Service and an IPv4 EndpointSlice naming its address, as a Pod's would be.
   */
  async addBackend(name: string): Promise<Backend> {
    const host = await startNetnsHost({
      body: name,
      logFile: join(this.dir, `backend-${name}.log`),
    });
    const backend = { name, address: host.address, port: host.port, host };
    this.backends.push(backend);
    await this.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: this.namespace },
      spec: { ports: [{ name: 'http', port: 80, targetPort: host.port }], clusterIP: 'None' },
    });
    await this.apply({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${name}-1`,
        namespace: this.namespace,
        labels: { 'kubernetes.io/service-name': name },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: host.port, protocol: 'TCP' }],
      endpoints: [{ addresses: [host.address], conditions: { ready: true } }],
    });
    return backend;
  }

  async apply(object: Record<string, unknown>): Promise<void> {
    const result = await kubectl(['apply', '-f', '-'], JSON.stringify(object));
    if (result.exitCode !== 0) throw new Error(`kubectl apply: ${result.stderr}`);
  }

  ingress(
    name: string,
    rules: readonly Record<string, unknown>[],
    extra: Record<string, unknown> = {},
  ): Record<string, unknown> {
    return {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace: this.namespace },
      spec: { ingressClassName: this.ingressClass, rules, ...extra },
    };
  }

  /** A TLS Secret with a self-signed certificate for `host`. */
  async tlsSecret(name: string, host: string): Promise<string> {
    const { dir } = await selfSignedCertificate(host, { parent: this.dir });
    const result = await kubectl([
      'create',
      'secret',
      'tls',
      name,
      '-n',
      this.namespace,
      `--cert=${join(dir, 'tls.crt')}`,
      `--key=${join(dir, 'tls.key')}`,
    ]);
    if (result.exitCode !== 0) throw new Error(result.stderr);
    return join(dir, 'tls.crt');
  }

  /** GET through one replica's HAProxy (HTTP on 8080, HTTPS on 8443 with SNI = host). */
  fetch(
    replica: HAProxyReplica,
    scheme: 'http' | 'https',
    host: string,
    path = '/',
  ): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const options = {
        host: replica.address,
        port: scheme === 'http' ? 8080 : 8443,
        path,
        headers: { host },
        agent: false as const,
        timeout: 5_000,
      };
      const done = (response: IncomingMessage): void => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
        });
      };
      const call =
        scheme === 'http'
          ? httpRequest(options, done)
          : httpsRequest({ ...options, servername: host, rejectUnauthorized: false }, done);
      call.on('error', reject);
      call.on('timeout', () => call.destroy(new Error('timeout')));
      call.end();
    });
  }

  /** The answers of both replicas over both schemes, as `status body` strings. */
  async everywhere(
    host: string,
    path = '/',
    schemes: readonly ('http' | 'https')[] = ['http', 'https'],
  ): Promise<string[]> {
    const answers: string[] = [];
    for (const replica of this.replicas) {
      for (const scheme of schemes) {
        const answer = await this.fetch(replica, scheme, host, path).catch((error: unknown) => ({
          status: 0,
          body: String(error),
        }));
        answers.push(`${answer.status} ${answer.body}`);
      }
    }
    return answers;
  }

  async stop(): Promise<void> {
    await Promise.all(this.controllers.map((controller) => controller.pod.stop()));
    await Promise.all(this.replicas.map((replica) => replica.pod.stop()));
    await Promise.all(this.backends.map((backend) => backend.host.stop()));
  }
}
