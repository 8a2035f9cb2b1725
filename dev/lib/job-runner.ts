import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, openSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  type V1Container,
  type V1EnvVar,
  type V1Job,
  type V1JobCondition,
  type V1PodSpec,
} from '@kubernetes/client-node';
import { writeAtomicProjection } from './atomic-writer.ts';
import { writeServiceAccountKubeconfig } from './kubeconfig.ts';
import { startWatchLoop } from './watch-loop.ts';
import { projectRoot } from './tools.ts';

/** The container path of the haptic binary, mapped to the local build. */
const imageBinary = '/usr/local/bin/haptic';

export interface JobRunnerOptions {
  readonly kubeconfigPath: string;
  /** Per-Job logs go to `<dir>/<namespace>/<job>.log`; the runner's own log is `<dir>/runner.log`. */
  readonly dir: string;
  /**
   * How to start the local build instead of /usr/local/bin/haptic.
   * @default [process.execPath, '<root>/dist/cli/main.js']
   */
  readonly hapticCommand?: readonly string[];
}

export interface JobRunner {
  readonly logPath: string;
  stop(): Promise<void>;
}

class JobSetupError extends Error {}

/**
 * Stands in for the Job controller and kubelet: watches Jobs in all namespaces and runs each
 * new Job's first container once, with the container's env (valueFrom secretKeyRef,
 * configMapKeyRef, fieldRef; envFrom), Secret/ConfigMap volumes projected into a directory,
 * authenticated as the Job's own ServiceAccount through a TokenRequest token, then writes a
 * Complete or Failed status. Only the haptic binary runs; anything else fails the Job.
 */
export function startJobRunner(options: JobRunnerOptions): JobRunner {
  const kc = new KubeConfig();
  kc.loadFromFile(options.kubeconfigPath);
  const batch = kc.makeApiClient(BatchV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const logPath = join(options.dir, 'runner.log');
  mkdirSync(options.dir, { recursive: true });
  const hapticCommand = options.hapticCommand ?? [
    process.execPath,
    join(projectRoot, 'dist/cli/main.js'),
  ];
  const started = new Set<string>();
  const running = new Set<Promise<void>>();
  let stopped = false;

  const record = (entry: Record<string, unknown>): void => {
    appendFileSync(logPath, `${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
  };

  const consider = (job: V1Job): void => {
    const uid = job.metadata?.uid;
    if (stopped || uid === undefined || started.has(uid) || isFinished(job) || job.spec?.suspend) {
      return;
    }
    started.add(uid);
    const run = runJob(job).finally(() => running.delete(run));
    running.add(run);
  };

  const runJob = async (job: V1Job): Promise<void> => {
    const namespace = job.metadata?.namespace ?? 'default';
    const name = job.metadata?.name ?? '';
    const workDir = join(options.dir, namespace, `${name}-${job.metadata?.uid ?? ''}`);
    const jobLog = join(options.dir, namespace, `${name}.log`);
    mkdirSync(workDir, { recursive: true });
    const startTime = new Date();
    let exitCode: number;
    let message: string;
    try {
      const spec = job.spec?.template.spec;
      const container = spec?.containers[0];
      if (spec === undefined || container === undefined) throw new JobSetupError('no container');
      const argv = await containerArgv(container, spec, namespace, workDir);
      const env = await containerEnv(container, spec, namespace, name, workDir);
      writeFileSync(jobLog, '');
      exitCode = await runProcess(
        [...hapticCommand, ...argv.slice(1)],
        env,
        workDir,
        jobLog,
        job.spec?.activeDeadlineSeconds,
      );
      message = exitCode === 0 ? 'completed' : `exited with code ${exitCode}`;
    } catch (error) {
      exitCode = -1;
      message = error instanceof Error ? error.message : String(error);
      appendFileSync(jobLog, `job runner: ${message}\n`);
    }
    record({ job: `${namespace}/${name}`, exitCode, message });
    await writeStatus(namespace, name, startTime, exitCode === 0, message).catch(
      (error: unknown) => {
        record({ job: `${namespace}/${name}`, statusError: String(error) });
      },
    );
  };

  const containerArgv = async (
    container: V1Container,
    spec: V1PodSpec,
    namespace: string,
    workDir: string,
  ): Promise<string[]> => {
    const argv = [...(container.command ?? []), ...(container.args ?? [])];
    if (argv[0] !== imageBinary && argv[0] !== 'haptic') {
      throw new JobSetupError(`only ${imageBinary} runs here, not ${JSON.stringify(argv[0])}`);
    }
    // Secret and ConfigMap volumes: project them, then point paths under the mount there.
    const mounts = new Map<string, string>();
    for (const mount of container.volumeMounts ?? []) {
      const volume = spec.volumes?.find((v) => v.name === mount.name);
      const target = join(workDir, 'volumes', mount.name);
      if (volume?.secret?.secretName !== undefined) {
        const secret = await core.readNamespacedSecret({
          name: volume.secret.secretName,
          namespace,
        });
        const data = Object.fromEntries(
          Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
        );
        await writeAtomicProjection(target, data);
      } else if (volume?.configMap?.name !== undefined) {
        const map = await core.readNamespacedConfigMap({ name: volume.configMap.name, namespace });
        const data = Object.fromEntries(
          Object.entries(map.data ?? {}).map(([k, v]) => [k, Buffer.from(v)]),
        );
        await writeAtomicProjection(target, data);
      } else {
        mkdirSync(target, { recursive: true });
      }
      mounts.set(mount.mountPath.replace(/\/$/, ''), target);
    }
    if (mounts.size === 0) return argv;
    // One pass, longest mount path first, so a rewritten path is never rewritten again.
    const alternatives = [...mounts.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
    const pattern = new RegExp(`(^|=)(${alternatives.join('|')})(?=/|$)`, 'g');
    return argv.map((arg) =>
      arg.replace(
        pattern,
        (_match, lead: string, path: string) => `${lead}${mounts.get(path) ?? path}`,
      ),
    );
  };

  const containerEnv = async (
    container: V1Container,
    spec: V1PodSpec,
    namespace: string,
    jobName: string,
    workDir: string,
  ): Promise<NodeJS.ProcessEnv> => {
    const serviceAccount = spec.serviceAccountName ?? 'default';
    const kubeconfig = join(workDir, 'kubeconfig');
    await writeServiceAccountKubeconfig(kc, namespace, serviceAccount, kubeconfig).catch(
      (error: unknown) => {
        throw new JobSetupError(
          `TokenRequest for ServiceAccount ${serviceAccount}: ${String(error)}`,
        );
      },
    );
    const podName = `${jobName}-runner`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: workDir,
      KUBECONFIG: kubeconfig,
      POD_NAMESPACE: namespace,
    };
    for (const source of container.envFrom ?? []) {
      const values =
        source.secretRef?.name !== undefined
          ? await readData('secret', source.secretRef.name, namespace, source.secretRef.optional)
          : source.configMapRef?.name !== undefined
            ? await readData(
                'configmap',
                source.configMapRef.name,
                namespace,
                source.configMapRef.optional,
              )
            : {};
      for (const [k, v] of Object.entries(values)) env[`${source.prefix ?? ''}${k}`] = v;
    }
    for (const variable of container.env ?? []) {
      const value = await envValue(variable, namespace, podName, serviceAccount);
      if (value !== undefined) env[variable.name] = value;
    }
    return env;
  };

  const readData = async (
    kind: 'secret' | 'configmap',
    name: string,
    namespace: string,
    optional: boolean | undefined,
  ): Promise<Record<string, string>> => {
    try {
      if (kind === 'secret') {
        const secret = await core.readNamespacedSecret({ name, namespace });
        return Object.fromEntries(
          Object.entries(secret.data ?? {}).map(([k, v]) => [
            k,
            Buffer.from(v, 'base64').toString(),
          ]),
        );
      }
      return (await core.readNamespacedConfigMap({ name, namespace })).data ?? {};
    } catch (error) {
      if (optional === true) return {};
      throw new JobSetupError(`${kind} ${namespace}/${name}: ${String(error)}`);
    }
  };

  const envValue = async (
    variable: V1EnvVar,
    namespace: string,
    podName: string,
    serviceAccount: string,
  ): Promise<string | undefined> => {
    const from = variable.valueFrom;
    if (from === undefined) return variable.value ?? '';
    if (from.secretKeyRef !== undefined) {
      const ref = from.secretKeyRef;
      const data = await readData('secret', ref.name ?? '', namespace, ref.optional);
      return lookupKey(data, ref.key, `secret ${ref.name ?? ''}`, ref.optional);
    }
    if (from.configMapKeyRef !== undefined) {
      const ref = from.configMapKeyRef;
      const data = await readData('configmap', ref.name ?? '', namespace, ref.optional);
      return lookupKey(data, ref.key, `configmap ${ref.name ?? ''}`, ref.optional);
    }
    if (from.fieldRef !== undefined) {
      const fields: Record<string, string> = {
        'metadata.name': podName,
        'metadata.namespace': namespace,
        'spec.serviceAccountName': serviceAccount,
        'spec.nodeName': 'haptic-dev-runner',
        'status.podIP': '127.0.0.1',
      };
      const value = fields[from.fieldRef.fieldPath];
      if (value === undefined)
        throw new JobSetupError(`unsupported fieldRef ${from.fieldRef.fieldPath}`);
      return value;
    }
    throw new JobSetupError(`unsupported valueFrom in env ${variable.name}`);
  };

  const writeStatus = async (
    namespace: string,
    name: string,
    startTime: Date,
    succeeded: boolean,
    message: string,
  ): Promise<void> => {
    const now = new Date();
    const condition = (type: string, reason: string): V1JobCondition => ({
      type,
      status: 'True',
      reason,
      message,
      lastProbeTime: now,
      lastTransitionTime: now,
    });
    const job = await batch.readNamespacedJob({ name, namespace });
    job.status = succeeded
      ? {
          startTime,
          completionTime: now,
          succeeded: 1,
          conditions: [
            condition('SuccessCriteriaMet', 'CompletionsReached'),
            condition('Complete', 'CompletionsReached'),
          ],
        }
      : {
          startTime,
          failed: 1,
          conditions: [
            condition('FailureTarget', 'BackoffLimitExceeded'),
            condition('Failed', 'BackoffLimitExceeded'),
          ],
        };
    await batch.replaceNamespacedJobStatus({ name, namespace, body: job });
  };

  record({ event: 'started' });
  const watch = startWatchLoop<V1Job>(kc, {
    path: '/apis/batch/v1/jobs',
    relist: async () => {
      const list = await batch.listJobForAllNamespaces();
      for (const job of list.items) consider(job);
      return list.metadata?.resourceVersion;
    },
    onEvent: (_phase, job) => {
      consider(job);
    },
    onError: (error) => {
      record({ event: 'list failed', error: String(error) });
    },
  });
  return {
    logPath,
    async stop() {
      stopped = true;
      await watch.stop();
      await Promise.allSettled([...running]);
    },
  };
}

function isFinished(job: V1Job): boolean {
  return (job.status?.conditions ?? []).some(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}

function lookupKey(
  data: Record<string, string>,
  key: string,
  source: string,
  optional: boolean | undefined,
): string | undefined {
  const value = data[key];
  if (value === undefined && optional !== true) {
    throw new JobSetupError(`${source} has no key ${key}`);
  }
  return value;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function runProcess(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  logFile: string,
  deadlineSeconds: number | undefined,
): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined) return Promise.resolve(-1);
  const fd = openSync(logFile, 'a');
  try {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', fd, fd] });
    const timer =
      deadlineSeconds === undefined
        ? undefined
        : setTimeout(() => child.kill('SIGKILL'), deadlineSeconds * 1000);
    return new Promise((resolve) => {
      child.once('error', () => {
        resolve(-1);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code ?? -1);
      });
    });
  } finally {
    closeSync(fd);
  }
}
