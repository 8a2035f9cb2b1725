/**
 * A Pod of one of the chart's Deployments, run as local processes (nothing in this cluster
 * runs Pods): each container's command, args and env exactly as the Deployment's template
 * has them, `/usr/local/bin/haptic` mapped to this checkout, paths under volume mounts mapped
 * to per-Pod directories, Secret volumes projected by the kubelet-layout writer and kept in
 * step with the Secret, fieldRef env from the Pod's name and namespace, and the
 * ServiceAccount's own token (TokenRequest) for the containers that get it: all when the Pod
 * automounts it, else those that mount a projected serviceAccountToken volume. The Pod's
 * directory is private to root (a Pod's volumes are visible to its containers only), and a
 * container with a user of its own (securityContext.runAsUser, the config-check sandbox) runs
 * as that user when this runner is root: the program drops to it itself (`--user`), as node
 * and this checkout stay where only root may run them.
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Container,
  type V1PodSpec,
} from '@kubernetes/client-node';
import { writeServiceAccountKubeconfig } from '../lib/kubeconfig.ts';
import { type SecretProjector, projectSecret } from '../lib/secret-projector.ts';
import { type SupervisedProcess, killGroup, startSupervised } from '../lib/supervised-process.ts';
import { projectRoot } from '../lib/tools.ts';

const imageBinary = '/usr/local/bin/haptic';

export interface LocalPodOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly deployment: string;
  readonly podName: string;
  /** The Pod's directory: volumes, logs. */
  readonly dir: string;
  /** How to run the haptic binary. @default node <root>/src/cli/main.ts */
  readonly hapticCommand?: readonly string[];
  /** Kill the processes when this PID disappears. @default process.pid */
  readonly ownerPid?: number | null;
}

export interface ContainerRun {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

export class LocalPod {
  readonly options: LocalPodOptions;
  readonly spec: V1PodSpec;
  readonly #projectors: SecretProjector[] = [];
  readonly #processes = new Map<string, SupervisedProcess>();
  #kubeconfig: string | undefined;
  /** The projected volume holding the ServiceAccount token, when the Pod does not automount it. */
  #tokenVolume: string | undefined;

  private constructor(options: LocalPodOptions, spec: V1PodSpec) {
    this.options = options;
    this.spec = spec;
  }

  /** Reads the Deployment and prepares the Pod's volumes. */
  static async create(options: LocalPodOptions): Promise<LocalPod> {
    const apps = options.kubeConfig.makeApiClient(AppsV1Api);
    const deployment = await apps.readNamespacedDeployment({
      name: options.deployment,
      namespace: options.namespace,
    });
    const spec = deployment.spec?.template.spec;
    if (spec === undefined) throw new Error(`Deployment ${options.deployment} has no Pod template`);
    const pod = new LocalPod(options, spec);
    await pod.#prepareVolumes();
    return pod;
  }

  /** The local directory of a volume. */
  volumeDir(name: string): string {
    return join(this.options.dir, 'volumes', name);
  }

  async #prepareVolumes(): Promise<void> {
    const { kubeConfig, namespace } = this.options;
    const core = kubeConfig.makeApiClient(CoreV1Api);
    mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.options.dir, 0o700);
    for (const volume of this.spec.volumes ?? []) {
      const dir = this.volumeDir(volume.name);
      mkdirSync(dir, { recursive: true });
      const sources = volume.projected?.sources ?? [];
      if (sources.some((source) => source.serviceAccountToken !== undefined)) {
        this.#tokenVolume = volume.name;
      }
      const secretName = volume.secret?.secretName;
      if (secretName === undefined) continue;
      const exists = await core
        .readNamespacedSecret({ name: secretName, namespace })
        .then(() => true)
        .catch(() => false);
      if (!exists && volume.secret?.optional === true) continue;
      this.#projectors.push(await projectSecret(kubeConfig, namespace, secretName, [{ dir }]));
    }
    if (this.spec.automountServiceAccountToken === true || this.#tokenVolume !== undefined) {
      this.#kubeconfig = join(this.options.dir, 'kubeconfig');
      await writeServiceAccountKubeconfig(
        kubeConfig,
        namespace,
        this.spec.serviceAccountName ?? 'default',
        this.#kubeconfig,
      );
    }
  }

  /** The ServiceAccount kubeconfig (when the Pod automounts its token or projects it). */
  get kubeconfig(): string | undefined {
    return this.#kubeconfig;
  }

  /** Whether a container gets the ServiceAccount token. */
  #hasToken(container: V1Container): boolean {
    if (this.spec.automountServiceAccountToken === true) return true;
    return (container.volumeMounts ?? []).some((mount) => mount.name === this.#tokenVolume);
  }

  container(name: string): V1Container {
    const found = [...(this.spec.initContainers ?? []), ...this.spec.containers].find(
      (container) => container.name === name,
    );
    if (found === undefined) throw new Error(`the Pod template has no container ${name}`);
    return found;
  }

  /** argv and env of a container, mapped to this machine. */
  containerRun(name: string): ContainerRun {
    const container = this.container(name);
    const mounts = new Map<string, string>();
    for (const mount of container.volumeMounts ?? []) {
      mounts.set(mount.mountPath.replace(/\/$/, ''), this.volumeDir(mount.name));
    }
    const alternatives = [...mounts.keys()]
      .sort((a, b) => b.length - a.length)
      .map((path) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const pattern = new RegExp(`(^|=)(${alternatives.join('|')})(?=/|$|,)`, 'g');
    const raw = [...(container.command ?? []), ...(container.args ?? [])];
    const mapped = raw.map((arg) =>
      alternatives.length === 0
        ? arg
        : arg.replace(
            pattern,
            (_m, lead: string, path: string) => `${lead}${mounts.get(path) ?? path}`,
          ),
    );
    const [binary, ...args] = mapped;
    const ownUser = container.securityContext?.runAsUser;
    const ownGroup = container.securityContext?.runAsGroup ?? ownUser;
    const asUser =
      binary === imageBinary && ownUser !== undefined && process.getuid?.() === 0
        ? [`--user=${ownUser}:${ownGroup}`]
        : [];
    const argv =
      binary === imageBinary
        ? [
            ...(this.options.hapticCommand ?? [
              process.execPath,
              join(projectRoot, 'src/cli/main.ts'),
            ]),
            ...args,
            ...asUser,
          ]
        : mapped;
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: this.options.dir };
    for (const variable of container.env ?? []) {
      const field = variable.valueFrom?.fieldRef?.fieldPath;
      if (field === 'metadata.name') env[variable.name] = this.options.podName;
      else if (field === 'metadata.namespace') env[variable.name] = this.options.namespace;
      else if (variable.valueFrom === undefined) env[variable.name] = variable.value ?? '';
    }
    if (this.#kubeconfig !== undefined && this.#hasToken(container)) {
      env.KUBECONFIG = this.#kubeconfig;
    }
    return { argv, env };
  }

  /** Starts a container's process (argv and env adjusted by `adjust`). */
  start(
    name: string,
    adjust: (run: ContainerRun) => ContainerRun = (run) => run,
  ): SupervisedProcess {
    const run = adjust(this.containerRun(name));
    const [command = '', ...args] = run.argv;
    const process_ = startSupervised({
      name: `${this.options.podName}/${name}`,
      command,
      args,
      env: run.env,
      logFile: this.logFile(name),
      ownerPid: this.options.ownerPid === undefined ? process.pid : this.options.ownerPid,
    });
    this.#processes.set(name, process_);
    return process_;
  }

  /** Whether a container was started and not stopped or killed since. */
  started(name: string): boolean {
    return this.#processes.has(name);
  }

  logFile(container: string): string {
    return join(this.options.dir, `${container}.log`);
  }

  /** Kills a container's processes at once (SIGKILL), as a node failure would. */
  async killContainer(name: string): Promise<void> {
    const process_ = this.#processes.get(name);
    if (process_ === undefined) return;
    killGroup(process_.pid, 'SIGKILL');
    await process_.exited;
    this.#processes.delete(name);
  }

  async stopContainer(name: string): Promise<void> {
    await this.#processes.get(name)?.stop();
    this.#processes.delete(name);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#processes.keys()].map((name) => this.stopContainer(name)));
    await Promise.all(this.#projectors.map((projector) => projector.stop()));
  }
}
