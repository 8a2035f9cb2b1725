/**
 * Real Flux: source-controller and helm-controller (pinned in tools/flux, built by
 * dev/install-tools.sh) as processes on this machine with the cluster's admin kubeconfig,
 * leader election off, metrics and health on loopback ports of their own, source-controller's
 * artifact server and storage on loopback; their CRDs from the modules' config/crd/bases.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { freePort } from '../lib/free-port.ts';
import { startSupervised, type SupervisedProcess } from '../lib/supervised-process.ts';
import { projectRoot, toolPath } from '../lib/tools.ts';
import type { ClusterCli } from './cluster-cli.ts';

export const fluxNamespace = 'flux-system';
const sourceModule = 'github.com/fluxcd/source-controller';
const helmModule = 'github.com/fluxcd/helm-controller';
const fluxTools = join(projectRoot, 'tools', 'flux');

export interface FluxControllers {
  /** Module versions: source-controller, helm-controller. */
  readonly versions: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/** The module's directory in the Go module cache (downloaded when tools/flux was built). */
async function moduleDir(module: string): Promise<{ dir: string; version: string }> {
  const { stdout } = await execa('go', ['list', '-m', '-json', module], { cwd: fluxTools });
  const info = JSON.parse(stdout) as { Dir?: string; Version?: string };
  if (info.Dir === undefined || info.Version === undefined) {
    throw new Error(`${module} is not in the Go module cache; run dev/install-tools.sh first.`);
  }
  return { dir: info.Dir, version: info.Version };
}

async function installCrds(cli: ClusterCli, moduleRoot: string): Promise<void> {
  const bases = join(moduleRoot, 'config', 'crd', 'bases');
  for (const file of readdirSync(bases).filter((name) => name.endsWith('.yaml'))) {
    await cli.kubectl(['apply', '--server-side', '--force-conflicts', '-f', join(bases, file)]);
  }
}

async function waitHealthy(name: string, port: number, process: SupervisedProcess, log: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await fetch(`http://127.0.0.1:${String(port)}/readyz`).catch(() => undefined);
    if (answer?.status === 200) return;
    const exited = await Promise.race([process.exited.then(() => true), sleep(250, false)]);
    if (exited || Date.now() > deadline) {
      const last = readFileSync(log, 'utf8').trim().split('\n').slice(-3).join(' | ');
      throw new Error(`${name} did not become ready on 127.0.0.1:${String(port)}: ${last}`);
    }
  }
}

export async function startFluxControllers(cli: ClusterCli, dir: string): Promise<FluxControllers> {
  const source = await moduleDir(sourceModule);
  const helm = await moduleDir(helmModule);
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
    const health = await freePort();
    const metrics = await freePort();
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
    await waitHealthy(name, health, process, log);
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
