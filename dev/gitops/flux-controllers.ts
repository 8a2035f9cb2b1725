/**
 * Real Flux: source-controller and helm-controller (pinned in tools/flux, built by
 * dev/install-tools.sh) as processes on this machine with the cluster's admin kubeconfig,
 * leader election off, metrics and health on loopback ports of their own, source-controller's
 * artifact server and storage on loopback; their CRDs from the modules' config/crd/bases.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, freePorts } from '../lib/free-port.ts';
import { startSupervised, type SupervisedProcess } from '../lib/supervised-process.ts';
import { toolPath } from '../lib/tools.ts';
import type { ClusterCli } from './cluster-cli.ts';
import { moduleDir, waitHealthy } from './engine-process.ts';

export const fluxNamespace = 'flux-system';
const sourceModule = 'github.com/fluxcd/source-controller';
const helmModule = 'github.com/fluxcd/helm-controller';

export interface FluxControllers {
  /** Module versions: source-controller, helm-controller. */
  readonly versions: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

async function installCrds(cli: ClusterCli, moduleRoot: string): Promise<void> {
  const bases = join(moduleRoot, 'config', 'crd', 'bases');
  for (const file of readdirSync(bases).filter((name) => name.endsWith('.yaml'))) {
    await cli.kubectl(['apply', '--server-side', '--force-conflicts', '-f', join(bases, file)]);
  }
}

export async function startFluxControllers(cli: ClusterCli, dir: string): Promise<FluxControllers> {
  const source = await moduleDir('flux', sourceModule);
  const helm = await moduleDir('flux', helmModule);
  await installCrds(cli, source.dir);
  await installCrds(cli, helm.dir);
  await cli.kubectl(
    ['apply', '-f', '-'],
    await cli.kubectl(['create', 'namespace', fluxNamespace, '--dry-run=client', '-o', 'yaml']),
  );
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const storagePort = await freePort();
  const started: SupervisedProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const process of started.reverse()) await process.stop();
  };
  const start = async (name: 'source-controller' | 'helm-controller', extra: string[]) => {
    const [health, metrics] = await freePorts(2);
    const log = join(dir, `${name}.log`);
    const process = startSupervised({
      name,
      command: toolPath(name),
      args: [
        `--metrics-addr=127.0.0.1:${String(metrics)}`,
        `--health-addr=127.0.0.1:${String(health)}`,
        '--enable-leader-election=false',
        '--log-encoding=console',
        ...extra,
      ],
      logFile: log,
      env: {
        ...globalThis.process.env,
        KUBECONFIG: cli.kubeconfig,
        RUNTIME_NAMESPACE: fluxNamespace,
      },
    });
    started.push(process);
    await waitHealthy(name, `http://127.0.0.1:${String(health)}/readyz`, process, log);
  };
  try {
    await start('source-controller', [
      `--storage-path=${join(dir, 'storage')}`,
      `--storage-addr=127.0.0.1:${String(storagePort)}`,
      `--storage-adv-addr=127.0.0.1:${String(storagePort)}`,
    ]);
    await start('helm-controller', []);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    versions: { 'source-controller': source.version, 'helm-controller': helm.version },
    stop,
  };
}
