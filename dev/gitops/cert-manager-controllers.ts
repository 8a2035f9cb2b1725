/**
 * Real cert-manager: its controller and cainjector, built from the published root module
 * `github.com/cert-manager/cert-manager` by small mains of our own (tools/cert-manager; the
 * upstream binary modules are not served by the Go module proxy), run as processes on this
 * machine with the cluster's admin kubeconfig, leader election off, metrics and health on
 * loopback ports of their own. The CRDs come from the module's `deploy/crds` (plain
 * controller-gen YAML, no templating).
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { freePorts } from '../lib/free-port.ts';
import { startSupervised, type SupervisedProcess } from '../lib/supervised-process.ts';
import { toolPath } from '../lib/tools.ts';
import { clusterCli, type ClusterCli } from './cluster-cli.ts';
import { moduleDir, waitHealthy } from './engine-process.ts';

/** Where ClusterIssuers read their Secrets (the controller's cluster resource namespace). */
export const certManagerNamespace = 'cert-manager';
const certManagerModule = 'github.com/cert-manager/cert-manager';
const binaries = ['cert-manager-controller', 'cert-manager-cainjector'] as const;
type CertManagerBinary = (typeof binaries)[number];

export interface CertManager {
  /** The cert-manager module version each binary reports (`--version`), by binary. */
  readonly versions: Readonly<Record<CertManagerBinary, string>>;
  stop(): Promise<void>;
}

async function installCrds(cli: ClusterCli, moduleRoot: string): Promise<void> {
  const crds = join(moduleRoot, 'deploy', 'crds');
  const names: string[] = [];
  for (const file of readdirSync(crds).filter((name) => name.endsWith('.yaml'))) {
    const applied = await cli.kubectl([
      'apply',
      '--server-side',
      '--force-conflicts',
      '-o',
      'name',
      '-f',
      join(crds, file),
    ]);
    names.push(...applied.split('\n').filter((line) => line !== ''));
  }
  await cli.kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...names]);
}

/**
 * Installs cert-manager's CRDs and its namespace on the cluster of `kubeconfig`, starts the
 * controller and the cainjector (logs in `dir`), and resolves once both answer /readyz: the
 * controller after its informer caches synced and every control loop started. A binary
 * built from another pin than tools/cert-manager/go.mod is refused before anything starts.
 */
export async function startCertManager(kubeconfig: string, dir: string): Promise<CertManager> {
  const paths = {
    'cert-manager-controller': toolPath('cert-manager-controller'),
    'cert-manager-cainjector': toolPath('cert-manager-cainjector'),
  };
  const pinned = await moduleDir('cert-manager', certManagerModule);
  const versions = {
    'cert-manager-controller': '',
    'cert-manager-cainjector': '',
  };
  for (const name of binaries) {
    const { stdout } = await execa(paths[name], ['--version']);
    versions[name] = stdout.trim();
    if (versions[name] !== pinned.version) {
      throw new Error(
        `${paths[name]} was built from cert-manager ${versions[name]}, but tools/cert-manager/go.mod pins ${pinned.version}; rebuild it with dev/install-tools.sh ${name}.`,
      );
    }
  }

  const cli = clusterCli(kubeconfig);
  await installCrds(cli, pinned.dir);
  await cli.kubectl(
    ['apply', '-f', '-'],
    await cli.kubectl([
      'create',
      'namespace',
      certManagerNamespace,
      '--dry-run=client',
      '-o',
      'yaml',
    ]),
  );

  mkdirSync(dir, { recursive: true });
  const started: SupervisedProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const process of started.reverse()) await process.stop();
  };
  const start = async (name: CertManagerBinary, extra: readonly string[]): Promise<void> => {
    const [health, metrics] = await freePorts(2);
    const log = join(dir, `${name}.log`);
    const process = startSupervised({
      name,
      command: paths[name],
      args: [
        `--kubeconfig=${kubeconfig}`,
        `--metrics-address=127.0.0.1:${String(metrics)}`,
        `--health-address=127.0.0.1:${String(health)}`,
        ...extra,
      ],
      logFile: log,
    });
    started.push(process);
    await waitHealthy(name, `http://127.0.0.1:${String(health)}/readyz`, process, log);
  };
  try {
    await start('cert-manager-controller', [`--namespace=${certManagerNamespace}`]);
    await start('cert-manager-cainjector', []);
  } catch (error) {
    await stop();
    throw error;
  }
  return { versions, stop };
}
