/**
 * A release of the chart installed in a test namespace of the run's node, as a user installs
 * it: hooks run as Jobs, the haptic-controller and haptic-haproxy Deployments roll out as Pods
 * of the product image, the controller finds the agents by Pod IP. Sample backends are
 * Deployments too (the product image's Node answering `<name> <path>`) behind a Service whose
 * EndpointSlice the cluster maintains. Each site has its own namespace and IngressClass, so
 * test files running in parallel never see each other. Pod IPs answer from the host.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { readChartImage } from '../../../dev/lib/chart-image.ts';
import { containerdSocket } from '../../../dev/lib/node/node-config.ts';
import { sampleBackendObjects } from '../../../dev/lib/sample-backend.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { createTestNamespace, helm, kubectl } from '../../support/cluster.ts';
import { selfSignedCertificate } from '../../support/self-signed.ts';
import { servingMaterial } from '../webhook/registered-webhook.ts';

/** A Pod of the site: its name, Pod IP and the uid of the Pod object. */
export interface SitePod {
  readonly name: string;
  readonly address: string;
  readonly uid: string;
}

/** A haptic-haproxy Pod: HAProxy on :8080/:8443, the agent on `agentPort`. */
export interface HAProxyReplica extends SitePod {
  readonly agentPort: number;
}

export interface Backend {
  readonly name: string;
  /** Pod IP of the backend's one replica. */
  readonly address: string;
  readonly port: number;
}

export interface Answer {
  readonly status: number;
  /** The body; for a redirect (3xx), `-> ` and its Location. */
  readonly body: string;
}

export interface SiteOptions {
  /** Replicas of the haptic-controller Deployment. @default 1 */
  readonly controllers?: number;
  /**
   * Register the chart's admission webhook: the site creates a serving certificate for the
   * webhook Service in a Secret and passes it with its CA bundle (controller.webhook.*).
   * Otherwise the site has no webhook (controller.webhook.enabled=false).
   */
  readonly webhook?: boolean;
  /** More `helm install` arguments, e.g. `--set` pairs. */
  readonly values?: readonly string[];
}

export { eventually } from '../../support/eventually.ts';

interface ContainerStatus {
  readonly name: string;
  readonly containerID?: string;
  readonly restartCount: number;
}

interface PodList {
  readonly items: readonly {
    readonly metadata: {
      readonly name: string;
      readonly uid: string;
      readonly deletionTimestamp?: string;
    };
    readonly status: {
      readonly podIP?: string;
      readonly phase?: string;
      readonly conditions?: readonly { readonly type: string; readonly status: string }[];
      readonly containerStatuses?: readonly ContainerStatus[];
      /** Sidecars (init containers with restartPolicy Always): the agent, config-check. */
      readonly initContainerStatuses?: readonly ContainerStatus[];
    };
  }[];
}

async function kubectlOk(args: readonly string[], input?: string): Promise<string> {
  const result = await kubectl(args, input);
  if (result.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

export class LocalSite {
  readonly namespace: string;
  readonly ingressClass: string;
  readonly dir: string;
  replicas: HAProxyReplica[] = [];
  controllers: SitePod[] = [];
  readonly backends: Backend[] = [];
  /** The CA of the webhook's serving certificate, once the site registers the webhook. */
  webhookCaPem = '';

  private constructor(namespace: string) {
    this.namespace = namespace;
    this.ingressClass = namespace;
    this.dir = mkdtempSync(join(tmpdir(), `haptic-site-${namespace}-`));
  }

  /** Installs the chart, waits for both Deployments to roll out, reads the Pods' addresses. */
  static async start(prefix: string, options: SiteOptions = {}): Promise<LocalSite> {
    const namespace = await createTestNamespace(prefix);
    const site = new LocalSite(namespace);
    // Without the option, no webhook (the chart's default registers one with its own
    // certificate): tests create Ingresses the webhook would deny, to see what the controller
    // does with them.
    const webhook =
      options.webhook === true
        ? await site.webhookValues()
        : ['--set', 'controller.webhook.enabled=false'];
    const install = await helm([
      ...['install', 'haptic', join(projectRoot, 'chart'), '-n', namespace],
      ...['--set', `ingressClass.name=${site.ingressClass}`],
      ...['--set', `controller.replicas=${String(options.controllers ?? 1)}`],
      ...webhook,
      ...(options.values ?? []),
      ...['--timeout', '3m'],
    ]);
    if (install.exitCode !== 0) throw new Error(`helm install failed: ${install.stderr}`);
    await site.rollout();
    return site;
  }

  /**
   * `helm upgrade --reuse-values` with more values (hooks run again), then waits for both
   * Deployments to roll out and reads the new Pods.
   */
  async upgrade(values: readonly string[]): Promise<void> {
    const upgrade = await helm([
      ...['upgrade', 'haptic', join(projectRoot, 'chart'), '-n', this.namespace],
      ...['--reuse-values', ...values, '--timeout', '3m'],
    ]);
    if (upgrade.exitCode !== 0) throw new Error(`helm upgrade failed: ${upgrade.stderr}`);
    await this.rollout();
  }

  /** Registers the chart's webhook on a site started without it (as an operator enables it). */
  async enableWebhook(): Promise<void> {
    await this.upgrade(await this.webhookValues());
  }

  private async rollout(): Promise<void> {
    // Not `helm --wait`: it also waits for the LoadBalancer Service's address, which no one
    // assigns on this node.
    for (const deployment of ['haptic-controller', 'haptic-haproxy']) {
      await kubectlOk([
        ...['rollout', 'status', `deployment/${deployment}`, '-n', this.namespace],
        '--timeout=3m',
      ]);
    }
    await this.refreshPods();
  }

  /** The DNS name of the webhook Service, which its serving certificate names. */
  get webhookService(): string {
    return `haptic-webhook.${this.namespace}.svc`;
  }

  /** The webhook serving certificate in a Secret, and the values that register the webhook. */
  private async webhookValues(): Promise<string[]> {
    const material = await servingMaterial(this.webhookService);
    this.webhookCaPem = material.caPem;
    const dir = join(this.dir, 'webhook-tls');
    mkdirSync(dir);
    writeFileSync(join(dir, 'tls.crt'), material.certPem);
    writeFileSync(join(dir, 'tls.key'), material.keyPem, { mode: 0o600 });
    await kubectlOk([
      ...['create', 'secret', 'tls', 'haptic-webhook-tls', '-n', this.namespace],
      `--cert=${join(dir, 'tls.crt')}`,
      `--key=${join(dir, 'tls.key')}`,
    ]);
    return [
      ...['--set', 'controller.webhook.enabled=true'],
      ...['--set', 'controller.webhook.secretName=haptic-webhook-tls'],
      ...['--set', `controller.webhook.caBundle=${Buffer.from(material.caPem).toString('base64')}`],
    ];
  }

  /** Pods of one of the release's components: Ready ones, not being deleted. */
  async pods(component: 'controller' | 'loadbalancer'): Promise<PodList['items']> {
    const list = JSON.parse(
      await kubectlOk([
        ...['get', 'pods', '-n', this.namespace, '-o', 'json'],
        ...['-l', `app.kubernetes.io/instance=haptic,app.kubernetes.io/component=${component}`],
      ]),
    ) as PodList;
    return list.items
      .filter(
        (pod) =>
          pod.metadata.deletionTimestamp === undefined &&
          pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      )
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  }

  /** Reads `replicas` and `controllers` again (after Pods were replaced). */
  async refreshPods(): Promise<void> {
    const asPod = (pod: PodList['items'][number]): SitePod => ({
      name: pod.metadata.name,
      address: pod.status.podIP ?? '',
      uid: pod.metadata.uid,
    });
    this.replicas = (await this.pods('loadbalancer')).map((pod) => ({
      ...asPod(pod),
      agentPort: 5555,
    }));
    this.controllers = (await this.pods('controller')).map(asPod);
  }

  /**
   * Acts on one container of a Pod through the node's containerd: `kill` sends SIGKILL, as an
   * OOM kill or a crash ends it (the kubelet restarts it); `pause` freezes it (its peers see
   * it stop answering) until `resume`.
   */
  async container(
    pod: string,
    container: string,
    action: 'kill' | 'pause' | 'resume',
  ): Promise<void> {
    const status = JSON.parse(
      await kubectlOk(['get', 'pod', pod, '-n', this.namespace, '-o', 'json']),
    ) as PodList['items'][number];
    const id = [
      ...(status.status.containerStatuses ?? []),
      ...(status.status.initContainerStatuses ?? []),
    ]
      .find((c) => c.name === container)
      ?.containerID?.replace(/^containerd:\/\//, '');
    if (id === undefined) throw new Error(`pod ${pod} has no running container ${container}`);
    const task = { kill: ['kill', '--signal', 'SIGKILL'], pause: ['pause'], resume: ['resume'] };
    await promisify(execFile)('ctr', [
      ...['--address', containerdSocket, '--namespace', 'k8s.io', 'tasks'],
      ...task[action],
      id,
    ]);
  }

  /**
   * The host directory of one of a Pod's emptyDir volumes (the kubelet keeps them under its
   * root, beside the node's admin kubeconfig), e.g. HAProxy's `haproxy-config`.
   */
  emptyDir(pod: SitePod, volume: string): string {
    return join(
      dirname(inject('kubeconfig')),
      'kubelet',
      'pods',
      pod.uid,
      'volumes',
      'kubernetes.io~empty-dir',
      volume,
    );
  }

  /**
   * A short path to a Unix socket in one of a Pod's emptyDir volumes: the kubelet's paths are
   * longer than a socket address may be (107 bytes), so a symlink to the volume stands in.
   */
  socketPath(pod: SitePod, volume: string, socket: string): string {
    const link = join(this.dir, `${pod.name.slice(-5)}-${volume}`);
    if (!existsSync(link)) symlinkSync(this.emptyDir(pod, volume), link);
    return join(link, socket);
  }

  /** `kubectl exec` in one container of a Pod of the site; throws when the command fails. */
  exec(pod: string, container: string, command: readonly string[]): Promise<string> {
    return kubectlOk(['exec', pod, '-n', this.namespace, '-c', container, '--', ...command]);
  }

  /**
   * What a failed assertion about deliveries needs to be explained, as text: every warning and
   * error the controllers and the agents logged, the release's Pods (IP, phase, restarts,
   * deletion) and the namespace's Events, newest last.
   */
  async failureContext(): Promise<string> {
    const containers = [
      ...this.controllers.map((pod) => ({ pod: pod.name, container: 'controller' })),
      ...this.replicas.map((pod) => ({ pod: pod.name, container: 'agent' })),
    ];
    const warnings = await Promise.all(
      containers.map(async ({ pod, container }) =>
        (await this.logs(pod, container).catch((error: unknown) => String(error)))
          .split('\n')
          .filter((line) => /"level":"(warn|error|fatal)"/.test(line))
          .map((line) => `${pod}/${container}: ${line}`),
      ),
    );
    const [pods, events] = await Promise.all([
      kubectlOk(['get', 'pods', '-n', this.namespace, '-o', 'wide']).catch(String),
      kubectlOk(['get', 'events', '-n', this.namespace, '--sort-by=.lastTimestamp']).catch(String),
    ]);
    return [...warnings.flat(), pods, events].join('\n');
  }

  /** `kubectl logs` of one container of a Pod of the site. */
  logs(pod: string, container: string): Promise<string> {
    return kubectlOk(['logs', pod, '-n', this.namespace, '-c', container]);
  }

  /**
   * A backend Deployment of one replica answering `<name> <path>` on :8080, its Service (port
   * 80), the EndpointSlice the cluster maintains; resolves once the Pod is Ready.
   */
  async addBackend(name: string): Promise<Backend> {
    for (const object of sampleBackendObjects(name, this.namespace, readChartImage().reference)) {
      await this.apply(object);
    }
    await kubectlOk(['rollout', 'status', `deployment/${name}`, '-n', this.namespace]);
    const address = await kubectlOk([
      ...['get', 'pods', '-n', this.namespace, '-l', `app=${name}`],
      ...['-o', 'jsonpath={.items[0].status.podIP}'],
    ]);
    const backend = { name, address, port: 8080 };
    this.backends.push(backend);
    return backend;
  }

  async apply(object: Record<string, unknown>): Promise<void> {
    await kubectlOk(['apply', '-f', '-'], JSON.stringify(object));
  }

  ingress(
    name: string,
    rules: readonly Record<string, unknown>[],
    extra: Record<string, unknown> = {},
    annotations: Readonly<Record<string, string>> = {},
  ): Record<string, unknown> {
    return {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace: this.namespace, annotations },
      spec: { ingressClassName: this.ingressClass, rules, ...extra },
    };
  }

  /** A TLS Secret with a self-signed certificate for `host`. */
  async tlsSecret(name: string, host: string): Promise<string> {
    const { dir } = await selfSignedCertificate(host, { parent: this.dir });
    await kubectlOk([
      ...['create', 'secret', 'tls', name, '-n', this.namespace],
      `--cert=${join(dir, 'tls.crt')}`,
      `--key=${join(dir, 'tls.key')}`,
    ]);
    return join(dir, 'tls.crt');
  }

  /** GET through one replica's HAProxy (HTTP on 8080, HTTPS on 8443 with SNI = host). */
  fetch(
    replica: HAProxyReplica,
    scheme: 'http' | 'https',
    host: string,
    path = '/',
    headers: Readonly<Record<string, string>> = {},
  ): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const options = {
        host: replica.address,
        port: scheme === 'http' ? 8080 : 8443,
        path,
        headers: { ...headers, host },
        agent: false as const,
        timeout: 5_000,
      };
      const done = (response: IncomingMessage): void => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const location = response.headers.location;
          const body =
            status >= 300 && status < 400 && location !== undefined
              ? `-> ${location}`
              : Buffer.concat(chunks).toString();
          resolve({ status, body });
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

  /** Uninstalls the release and deletes the namespace (its Pods with it). */
  async stop(): Promise<void> {
    await helm(['uninstall', 'haptic', '-n', this.namespace, '--wait', '--timeout', '2m']);
    await kubectl(['delete', 'namespace', this.namespace, '--wait=false']);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
