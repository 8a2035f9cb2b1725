/**
 * The chart's two Deployments of a release, run locally: `haptic-haproxy` replicas (the agent
 * and config-check sidecars, then HAProxy once their startup probes pass) and
 * `haptic-controller` replicas (the config-check sidecar, then the controller), each on its own
 * loopback address. What a Pod network would separate, addresses
 * separate here: each replica's servers listen on its own 127.x address (the agent's
 * `--listen` and HAProxy's `HAPTIC_LISTEN_ADDRESS` take the address in front of the chart's
 * ports), and controllers find agents through `--agent-endpoints` instead of Pod IPs.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { getLocal } from '../../src/agent/local-client.ts';
import { MasterSocket } from '../../src/agent/master-socket.ts';
import { probeSandbox } from '../../src/sandbox/check-client.ts';
import { LocalPod } from './local-pod.ts';

export interface HAProxyReplica {
  readonly pod: LocalPod;
  readonly name: string;
  readonly address: string;
  readonly agentPort: number;
  /** Starts the agent again (after stopAgent), as the kubelet restarts a sidecar. */
  restartAgent(): Promise<void>;
  stopAgent(): Promise<void>;
}

export interface ControllerReplica {
  readonly pod: LocalPod;
  readonly name: string;
  readonly address: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function flagValue(args: readonly string[], flag: string): string | undefined {
  const found = args.find((arg) => arg.startsWith(`${flag}=`));
  return found?.slice(flag.length + 1);
}

async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`${what} did not happen within ${ms} ms`);
}

/**
 * Starts the Pod's config-check sidecar unless it runs (a sidecar outlives the restarts of the
 * main container) and waits for its startup probe: the socket answers.
 */
async function startConfigCheck(pod: LocalPod, name: string): Promise<void> {
  if (!pod.started('config-check')) pod.start('config-check');
  const socket = flagValue(pod.containerRun('config-check').argv, '--socket') ?? '';
  await until(
    `config-check ${name} health`,
    async () => (await probeSandbox(socket, 1_000)) === undefined,
  );
}

export interface ReleasePodsOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  /** Deployment names. @default haptic-haproxy / haptic-controller */
  readonly haproxyDeployment?: string;
  readonly controllerDeployment?: string;
  readonly dir: string;
  readonly hapticCommand?: readonly string[];
  readonly ownerPid?: number | null;
}

/** A replica of one of the release's Deployments, in its own directory under `options.dir`. */
function createReleasePod(
  options: ReleasePodsOptions,
  deployment: string,
  name: string,
): Promise<LocalPod> {
  return LocalPod.create({
    kubeConfig: options.kubeConfig,
    namespace: options.namespace,
    deployment,
    podName: name,
    dir: join(options.dir, name),
    ...(options.hapticCommand === undefined ? {} : { hapticCommand: options.hapticCommand }),
    ...(options.ownerPid === undefined ? {} : { ownerPid: options.ownerPid }),
  });
}

/** Starts one haptic-haproxy replica on `address`. */
export async function startHAProxyReplica(
  options: ReleasePodsOptions,
  name: string,
  address: string,
): Promise<HAProxyReplica> {
  const pod = await createReleasePod(options, options.haproxyDeployment ?? 'haptic-haproxy', name);
  const agentArgs = pod.containerRun('agent').argv;
  const listen = flagValue(agentArgs, '--listen') ?? ':5555';
  const agentPort = Number(listen.slice(listen.lastIndexOf(':') + 1));
  const localSocket = flagValue(agentArgs, '--local-socket') ?? '';
  const startAgent = async (): Promise<void> => {
    pod.start('agent', (run) => ({
      ...run,
      argv: run.argv.map((arg) =>
        arg === `--listen=${listen}` ? `--listen=${address}:${agentPort}` : arg,
      ),
    }));
    // The startup probe: HAProxy starts once the agent answers on its local socket.
    await until(
      `agent ${name} health`,
      async () => (await getLocal(localSocket, '/healthz', 1_000)).status === 200,
    );
  };
  await startAgent();
  await startConfigCheck(pod, name);
  pod.start('haproxy', (run) => ({ ...run, env: { ...run.env, HAPTIC_LISTEN_ADDRESS: address } }));
  const haproxyArgs = pod.containerRun('haproxy').argv;
  const masterArg = haproxyArgs[haproxyArgs.indexOf('-S') + 1] ?? '';
  const master = new MasterSocket(masterArg.split(',')[0] ?? '', 1_000);
  await until(`HAProxy ${name}`, async () => /\bworker\b/.test(await master.command('show proc')));
  return {
    pod,
    name,
    address,
    agentPort,
    restartAgent: startAgent,
    stopAgent: () => pod.stopContainer('agent'),
  };
}

export interface ControllerReplicaOptions {
  readonly agents: readonly {
    readonly name: string;
    readonly address: string;
    readonly agentPort: number;
  }[];
  /** Extra flags, e.g. a shorter --lease-duration in tests. */
  readonly extraArgs?: readonly string[];
}

/** Prepares one haptic-controller replica on `address` (start() runs it). */
export async function controllerReplica(
  options: ReleasePodsOptions,
  name: string,
  address: string,
  replica: ControllerReplicaOptions,
): Promise<ControllerReplica> {
  const pod = await createReleasePod(
    options,
    options.controllerDeployment ?? 'haptic-controller',
    name,
  );
  const endpoints = replica.agents
    .map((agent) => `${agent.name}=${agent.address}:${agent.agentPort}`)
    .join(',');
  return {
    pod,
    name,
    address,
    start: async () => {
      await startConfigCheck(pod, name);
      pod.start('controller', (run) => ({
        ...run,
        argv: [
          ...run.argv,
          `--agent-endpoints=${endpoints}`,
          `--health-listen=${address}:8080`,
          `--metrics-listen=${address}:9090`,
          `--webhook-listen=${address}:9443`,
          ...(replica.extraArgs ?? []),
        ],
      }));
      await until(
        `controller ${name} readiness`,
        async () => (await fetch(`http://${address}:8080/readyz`)).status === 200,
        60_000,
      );
    },
    stop: async () => {
      await pod.stopContainer('controller');
      await pod.stopContainer('config-check');
    },
  };
}
