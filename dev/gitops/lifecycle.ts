// make test-gitops-lifecycle GITOPS_PROVIDER=argo|flux [GITOPS_CERTIFICATES=external|cert-manager]
// [GITOPS_ARTIFACTS=dir]: the GitOps guide's install, repeat sync, upgrade, rejection and
// forward recovery through a real GitOps engine on the real node, with four synthetic chart
// versions from this checkout in a real OCI registry. Writes result.json to the artifacts
// directory (default .gitops/<provider>-<certificates>/) and prints its path; exit code 0
// only when every phase passed.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { projectRoot, toolPath } from '../lib/tools.ts';
import { startArgoProvider } from './argo-provider.ts';
import { startCertManager } from './cert-manager-controllers.ts';
import type { ClusterCli } from './cluster-cli.ts';
import { startFluxProvider } from './flux-provider.ts';
import type { GitOpsProvider } from './gitops-provider.ts';
import { deployApplication } from './haproxy-traffic.ts';
import { watchHookJobs } from './hook-jobs.ts';
import { lifecycleCluster } from './lifecycle-cluster.ts';
import {
  installPhase,
  recoveryPhase,
  rejectionPhase,
  repeatPhase,
  upgradePhase,
  type PhaseContext,
  type PhaseOutcome,
} from './lifecycle-phases.ts';
import {
  phaseNames,
  type LifecycleResult,
  type PhaseName,
  type PhaseResult,
} from './lifecycle-result.ts';
import { startOciRegistry } from './oci-registry.ts';
import { prepareStableSecrets } from './stable-secrets.ts';
import { publishSyntheticReleases } from './synthetic-releases.ts';

const providerName = process.env.GITOPS_PROVIDER ?? '';
const certificates = process.env.GITOPS_CERTIFICATES || 'external';
const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
if (providerName !== 'flux' && providerName !== 'argo') {
  process.stderr.write(
    `GITOPS_PROVIDER=${providerName || '(unset)'}: name the GitOps engine, GITOPS_PROVIDER=argo or GITOPS_PROVIDER=flux.\n`,
  );
  process.exit(2);
}
if (certificates !== 'external' && certificates !== 'cert-manager') {
  process.stderr.write(
    `GITOPS_CERTIFICATES=${certificates}: name the certificate source, GITOPS_CERTIFICATES=external or GITOPS_CERTIFICATES=cert-manager.\n`,
  );
  process.exit(2);
}
const artifacts =
  process.env.GITOPS_ARTIFACTS || join(projectRoot, '.gitops', `${providerName}-${certificates}`);
rmSync(artifacts, { recursive: true, force: true });
mkdirSync(artifacts, { recursive: true });
// Run output, never committed (as .image/).
mkdirSync(join(projectRoot, '.gitops'), { recursive: true });
writeFileSync(join(projectRoot, '.gitops', '.gitignore'), '*\n');
const work = mkdtempSync(join(tmpdir(), 'haptic-gitops-'));
const started = performance.now();
const phases: Record<PhaseName, (ctx: PhaseContext) => Promise<PhaseOutcome>> = {
  install: installPhase,
  repeat: repeatPhase,
  upgrade: upgradePhase,
  rejection: rejectionPhase,
  recovery: recoveryPhase,
};

async function toolVersions(cli: ClusterCli, provider: GitOpsProvider) {
  const server = JSON.parse(await cli.kubectl(['version', '-o', 'json'])) as {
    serverVersion?: { gitVersion?: string };
  };
  const registry = await execa(
    'go',
    ['list', '-m', '-f', '{{.Version}}', 'github.com/distribution/distribution/v3'],
    {
      cwd: join(projectRoot, 'tools', 'registry'),
    },
  );
  return {
    kubernetes: server.serverVersion?.gitVersion ?? 'unknown',
    helm: (await execa(toolPath('helm'), ['version', '--short'])).stdout.trim(),
    registry: registry.stdout.trim(),
    skopeo: (await execa('skopeo', ['--version'])).stdout.trim(),
    ...provider.versions,
  };
}

const stops: (() => Promise<unknown>)[] = [];
let passed = false;
/** Stops what the run started, newest first, once. */
async function stopAll(): Promise<void> {
  for (const stop of stops.splice(0).reverse()) {
    await stop().catch((error: unknown) => {
      process.stderr.write(`clean-up: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  }
  rmSync(work, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    process.stderr.write(`${signal}: stopping everything the suite started…\n`);
    void stopAll().then(() => process.exit(1));
  });
}
try {
  const cluster = await lifecycleCluster(work);
  stops.push(() => cluster.stop());
  const { cli } = cluster;
  say(
    `cluster ready (${cluster.shared ? 'shared node' : 'own node'}) in ${String(Math.round((performance.now() - started) / 1000))} s`,
  );
  // The guide: "Install cert-manager before applying this configuration".
  const certManager =
    certificates === 'cert-manager'
      ? await startCertManager(cli.kubeconfig, join(artifacts, 'cert-manager'))
      : undefined;
  if (certManager !== undefined) stops.push(() => certManager.stop());
  const registry = await startOciRegistry(join(work, 'registry'));
  stops.push(() => registry.process.stop());
  const synthetic = await publishSyntheticReleases(join(work, 'releases'), registry, cli);
  say(
    `registry ${registry.hostEndpoint}: charts and images ${synthetic.releases.map((r) => r.version).join(', ')}`,
  );
  const { values, names: stableSecrets } = await prepareStableSecrets(
    cli,
    join(work, 'certificates'),
    synthetic.imageRepository,
    certificates,
  );
  writeFileSync(join(artifacts, 'haptic-values.json'), `${JSON.stringify(values, null, 2)}\n`);
  await deployApplication(cli, cluster.image, join(work, 'certificates', 'frontend'));
  const jobs = await watchHookJobs(cli.kubeconfig);
  stops.push(() => {
    jobs.stop();
    return Promise.resolve();
  });
  const provider =
    providerName === 'argo'
      ? await startArgoProvider(cli, artifacts, synthetic.chartRepository)
      : await startFluxProvider(cli, artifacts, synthetic.chartUrl);
  stops.push(() => provider.stop());
  // First of the stops: the release goes while the engine's controllers still run.
  stops.push(() => cluster.clean());
  const ctx: PhaseContext = {
    cli,
    provider,
    values,
    stableSecrets,
    jobs,
    traffic: [],
    during: [],
    snapshots: {},
    rejectionLog: [],
  };
  const results: PhaseResult[] = [];
  for (const name of phaseNames) {
    if (results.some((r) => !r.passed)) {
      results.push({
        name,
        passed: false,
        seconds: 0,
        failures: ['not run: an earlier phase failed'],
        status: '',
      });
      continue;
    }
    jobs.setPhase(name);
    const from = performance.now();
    const outcome = await phases[name](ctx).catch((error: unknown) => ({
      failures: [error instanceof Error ? error.message : String(error)],
      status: '',
    }));
    const seconds = Math.round((performance.now() - from) / 100) / 10;
    const result = {
      name,
      passed: outcome.failures.length === 0,
      seconds,
      failures: outcome.failures.map((f) => `${name}: ${f}`),
      status: outcome.status,
    };
    results.push(result);
    say(
      `${result.passed ? 'PASS' : 'FAIL'} ${name} (${String(seconds)} s)${result.failures.map((f) => `\n  ${f}`).join('')}`,
    );
  }
  jobs.setPhase('clean-up');
  passed = results.every((r) => r.passed);
  const result: LifecycleResult = {
    provider: providerName,
    certificates,
    passed,
    seconds: Math.round((performance.now() - started) / 1000),
    phases: results,
    chartUrl: synthetic.chartUrl,
    imageRepository: synthetic.imageRepository,
    releases: synthetic.releases,
    hookJobs: jobs.jobs,
    traffic: { checks: ctx.traffic, during: ctx.during },
    rejectionLog: ctx.rejectionLog,
    tools: { ...(await toolVersions(cli, provider)), ...certManager?.versions },
  };
  const path = join(artifacts, 'result.json');
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  say(`${passed ? 'all phases passed' : 'FAILED'} in ${String(result.seconds)} s; result: ${path}`);
} catch (error) {
  process.stderr.write(
    `lifecycle suite could not run: ${error instanceof Error ? error.message : String(error)}\n`,
  );
} finally {
  await stopAll();
}
process.exit(passed ? 0 : 1);
