/**
 * Real Argo CD, as its core install runs it: application-controller and repo-server (one binary
 * pinned in tools/argocd, the component chosen by ARGOCD_BINARY_NAME) and Debian's redis-server
 * as their cache, as processes on this machine on loopback ports of their own. The CRDs and the
 * configuration objects (argocd-cm, argocd-secret, …) come from the module's own manifests; the
 * in-cluster destination is this cluster through ARGOCD_FAKE_IN_CLUSTER and KUBECONFIG.
 *
 * As in an Argo CD Core installation, no API server runs: the `default` AppProject is created
 * here (the guide: "Argo CD Core installations need an AppProject created separately"), the
 * chart repository is the Secret `argocd repo add` writes, and a sync is requested by writing
 * the Application's `operation` as the API server does for `argocd app sync`.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { freePort, freePorts } from '../lib/free-port.ts';
import { startSupervised, type SupervisedProcess } from '../lib/supervised-process.ts';
import { toolPath } from '../lib/tools.ts';
import type { ClusterCli } from './cluster-cli.ts';
import { moduleDir, waitHealthy } from './engine-process.ts';

export const argoNamespace = 'argocd';
const argoModule = 'github.com/argoproj/argo-cd/v3';

export interface ArgoControllers {
  /** Versions: the argo-cd module, redis-server. */
  readonly versions: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/** The project the guide's Application names, permitting what the chart installs. */
const defaultProject = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'AppProject',
  metadata: { name: 'default', namespace: argoNamespace },
  spec: {
    sourceRepos: ['*'],
    destinations: [{ server: '*', namespace: '*' }],
    clusterResourceWhitelist: [{ group: '*', kind: '*' }],
  },
};

/**
 * The repository Secret `argocd repo add <url> --type helm --enable-oci
 * --insecure-oci-force-http` writes: the suite's registry speaks plain HTTP.
 */
export function chartRepositorySecret(url: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'repo-haptic-charts',
      namespace: argoNamespace,
      labels: { 'argocd.argoproj.io/secret-type': 'repository' },
    },
    stringData: {
      type: 'helm',
      name: 'haptic-charts',
      url,
      enableOCI: 'true',
      insecureOCIForceHttp: 'true',
    },
  };
}

async function installManifests(cli: ClusterCli, moduleRoot: string): Promise<void> {
  const manifests = join(moduleRoot, 'manifests');
  const yamlIn = (dir: string): string[] =>
    readdirSync(join(manifests, dir))
      .filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml')
      .map((name) => join(manifests, dir, name));
  for (const file of yamlIn('crds')) {
    await cli.kubectl(['apply', '--server-side', '--force-conflicts', '-f', file]);
  }
  await cli.kubectl(
    ['apply', '-f', '-'],
    await cli.kubectl(['create', 'namespace', argoNamespace, '--dry-run=client', '-o', 'yaml']),
  );
  for (const file of yamlIn(join('base', 'config'))) {
    await cli.kubectl(['apply', '--server-side', '-n', argoNamespace, '-f', file]);
  }
  await cli.kubectl(['apply', '-f', '-'], JSON.stringify(defaultProject));
}

export async function startArgoControllers(
  cli: ClusterCli,
  dir: string,
  chartRepository: string,
): Promise<ArgoControllers> {
  const argo = await moduleDir('argocd', argoModule);
  await installManifests(cli, argo.dir);
  await cli.kubectl(['apply', '-f', '-'], JSON.stringify(chartRepositorySecret(chartRepository)));
  const started: SupervisedProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const process of started.reverse()) await process.stop();
  };
  const paths = Object.fromEntries(
    ['tls', 'ssh', 'gnupg', 'home'].map((name) => {
      const path = join(dir, 'argocd', name);
      mkdirSync(path, { recursive: true, mode: 0o700 });
      return [name, path];
    }),
  );
  const env = {
    ...globalThis.process.env,
    HOME: paths.home,
    KUBECONFIG: cli.kubeconfig,
    ARGOCD_FAKE_IN_CLUSTER: 'true',
    ARGOCD_GPG_ENABLED: 'false',
    ARGOCD_TLS_DATA_PATH: paths.tls,
    ARGOCD_SSH_DATA_PATH: paths.ssh,
    ARGOCD_GNUPGHOME: paths.gnupg,
  };
  const start = (name: string, command: string, args: string[], extraEnv = {}) => {
    const log = join(dir, `${name}.log`);
    const process = startSupervised({
      name,
      command,
      args,
      logFile: log,
      env: { ...env, ...extraEnv },
    });
    started.push(process);
    return { process, log };
  };
  try {
    const redisPort = await freePort();
    const redis = start('redis-server', 'redis-server', [
      ...['--bind', '127.0.0.1', '--port', String(redisPort), '--dir', dir],
      ...['--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
    ]);
    await waitRedis(redisPort, redis.process, redis.log);
    const redisAddress = `127.0.0.1:${String(redisPort)}`;
    const [repoPort, repoMetrics] = await freePorts(2);
    const repo = start(
      'argocd-repo-server',
      toolPath('argocd'),
      [
        ...['--address', '127.0.0.1', '--port', String(repoPort)],
        ...['--metrics-address', '127.0.0.1', '--metrics-port', String(repoMetrics)],
        ...['--disable-tls', '--client-ca-path=', '--redis', redisAddress, '--loglevel', 'info'],
      ],
      { ARGOCD_BINARY_NAME: 'argocd-repo-server' },
    );
    await waitHealthy(
      'argocd-repo-server',
      `http://127.0.0.1:${String(repoMetrics)}/healthz`,
      repo.process,
      repo.log,
    );
    const controllerMetrics = await freePort();
    const controller = start(
      'argocd-application-controller',
      toolPath('argocd'),
      [
        ...['--kubeconfig', cli.kubeconfig, '--namespace', argoNamespace],
        ...['--repo-server', `127.0.0.1:${String(repoPort)}`, '--repo-server-plaintext'],
        ...['--redis', redisAddress, '--metrics-port', String(controllerMetrics)],
        ...['--loglevel', 'info'],
      ],
      { ARGOCD_BINARY_NAME: 'argocd-application-controller' },
    );
    await waitHealthy(
      'argocd-application-controller',
      `http://127.0.0.1:${String(controllerMetrics)}/healthz`,
      controller.process,
      controller.log,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const redisVersion = (await execa('redis-server', ['--version'])).stdout.trim();
  return { versions: { 'argo-cd': argo.version, redis: redisVersion }, stop };
}

/** Resolves once redis answers PING on `port`. */
async function waitRedis(port: number, process: SupervisedProcess, log: string): Promise<void> {
  const ping = (): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.setTimeout(1_000);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
      socket.once('error', () => {
        resolve(false);
      });
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
  const deadline = Date.now() + 30_000;
  while (!(await ping())) {
    const exited = await Promise.race([process.exited.then(() => true), sleep(200, false)]);
    if (exited || Date.now() > deadline) {
      throw new Error(`redis-server did not answer PING on 127.0.0.1:${String(port)} (${log})`);
    }
  }
}
