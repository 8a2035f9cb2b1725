/**
 * The five phases of the lifecycle suite. Each returns the sentences naming what differed
 * from what the GitOps guide promises (none when it passed) and the engine's status line.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { componentName, preRolloutNames } from '../../src/validation/chart-names.ts';
import type { ClusterCli } from './cluster-cli.ts';
import type { GitOpsProvider } from './gitops-provider.ts';
import { checkTraffic, probeTraffic, type TrafficCheck } from './haproxy-traffic.ts';
import type { HookJobWatch } from './hook-jobs.ts';
import type { PhaseName, ProbeSummary } from './lifecycle-result.ts';
import {
  differences,
  isReleaseBookkeeping,
  takeSnapshot,
  type ReleaseSnapshot,
} from './release-snapshot.ts';
import { credentialsSecret, releaseName, releaseNamespace } from './stable-secrets.ts';
import type { ReleaseVersion } from './synthetic-releases.ts';

export interface PhaseContext {
  readonly cli: ClusterCli;
  readonly provider: GitOpsProvider;
  /** The release values of the guide (haptic-values.json). */
  readonly values: Record<string, unknown>;
  /** The credential and certificate Secrets of the guide that must keep their contents. */
  readonly stableSecrets: readonly string[];
  readonly jobs: HookJobWatch;
  readonly traffic: TrafficCheck[];
  readonly during: ProbeSummary[];
  readonly snapshots: Partial<Record<PhaseName, ReleaseSnapshot>>;
  readonly rejectionLog: string[];
}

export interface PhaseOutcome {
  readonly failures: string[];
  readonly status: string;
}

const minutes = (n: number): number => n * 60_000;
const preRolloutJob = preRolloutNames(releaseName).job;
/** The agent identity Secrets and their issuer (the chart's default names for the release). */
const identitySecrets = ['agent-server-tls', 'agent-client-tls', 'agent-ca'].map((suffix) =>
  componentName(releaseName, suffix),
);
/** The Secrets an upgrade or a recovery must leave as they were. */
const stableSecrets = (ctx: PhaseContext): string[] => [...identitySecrets, ...ctx.stableSecrets];
const renewalCronJob = componentName(releaseName, 'agent-renewal');
/**
 * The rejected change: a credential rotation committed to Git before its Secret exists. Helm
 * renders it (the chart looks nothing up); only the pre-rollout Job's live checks refuse it.
 */
const unprovisionedSecret = `${credentialsSecret}-rotated`;
const rejectedValues = (values: Record<string, unknown>): Record<string, unknown> => ({
  ...values,
  credentials: { existingSecret: unprovisionedSecret },
});

/** Both Deployments rolled out, then every replica answering HTTP and HTTPS with one config. */
async function settled(ctx: PhaseContext, phase: PhaseName): Promise<ReleaseSnapshot> {
  for (const deployment of ['haptic-controller', 'haptic-haproxy']) {
    await ctx.cli.kubectl([
      ...['rollout', 'status', `deployment/${deployment}`, '-n', releaseNamespace, '--timeout=5m'],
    ]);
  }
  const deadline = Date.now() + minutes(3);
  for (;;) {
    const snapshot = await takeSnapshot(ctx.cli);
    const checks = await checkTraffic(snapshot.haproxyPods, phase, 'after');
    const digests = new Set(Object.values(snapshot.configDigests));
    const ok =
      snapshot.haproxyPods.length === 2 &&
      checks.every((check) => check.ok) &&
      digests.size === 1 &&
      !digests.has('none');
    if (ok || Date.now() > deadline) {
      ctx.traffic.push(...checks);
      if (!ok) {
        const answers = checks.map((c) => `${c.pod} ${c.scheme}: ${c.answer}`).join('; ');
        throw new Error(
          `the release did not serve through 2 HAProxy replicas with one configuration within 3 min: replicas ${String(snapshot.haproxyPods.length)}, config digests ${JSON.stringify(snapshot.configDigests)}, answers ${answers}`,
        );
      }
      return snapshot;
    }
    await sleep(1_000);
  }
}

/** Whether a Job's `helm.sh/chart` label names chart `version` (Flux adds `+<digest>`, as `_…`). */
function ofVersion(chart: string, version: ReleaseVersion): boolean {
  return chart === `haptic-${version}` || chart.startsWith(`haptic-${version}_`);
}

/**
 * Hook Jobs of `version` that ran during `phase` (the renewal CronJob's own Jobs aside) and did
 * not complete. Jobs of another version are not this phase's: a retry of the refused version
 * that Flux (RetryOnFailure) starts while the next one is being selected may fail, as it must.
 */
function hookFailures(
  ctx: PhaseContext,
  phase: PhaseName,
  version: ReleaseVersion,
  expectPreRollout: boolean,
): string[] {
  const jobs = ctx.jobs.jobs.filter(
    (j) => j.phase === phase && !j.name.startsWith(renewalCronJob) && ofVersion(j.chart, version),
  );
  const failures = jobs
    .filter((j) => j.result !== 'Complete')
    .map((j) => `hook Job ${j.name} ended ${j.result} ${j.message}`.trim());
  if (expectPreRollout && !jobs.some((j) => j.name === preRolloutJob && j.result === 'Complete')) {
    failures.push(`no ${preRolloutJob} Job completed during ${phase}`);
  }
  return failures;
}

/** The findings (`ERROR …` lines) of a failed pre-rollout Job, for a failure message. */
async function preRolloutFindings(ctx: PhaseContext): Promise<string> {
  const log = await ctx.cli.kubectlTry(['logs', `job/${preRolloutJob}`, '-n', releaseNamespace]);
  const errors = log.stdout.split('\n').filter((line) => line.startsWith('ERROR'));
  return errors.length === 0 ? '' : `; kubectl logs job/${preRolloutJob}: ${errors.join(' | ')}`;
}

async function release(ctx: PhaseContext, phase: PhaseName, version: ReleaseVersion) {
  await ctx.provider.select(version, ctx.values);
  const status = await ctx.provider
    .waitReleased(version, minutes(10))
    .catch(async (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${message}${await preRolloutFindings(ctx)}`);
    });
  const snapshot = await settled(ctx, phase);
  ctx.snapshots[phase] = snapshot;
  return { status, snapshot };
}

export async function installPhase(ctx: PhaseContext): Promise<PhaseOutcome> {
  const { status } = await release(ctx, 'install', '0.0.0-gitops.1');
  return { failures: hookFailures(ctx, 'install', '0.0.0-gitops.1', true), status };
}

export async function repeatPhase(ctx: PhaseContext): Promise<PhaseOutcome> {
  const before = await takeSnapshot(ctx.cli);
  await ctx.provider.resync();
  const status = await ctx.provider.waitReleased('0.0.0-gitops.1', minutes(2));
  const after = await takeSnapshot(ctx.cli);
  ctx.snapshots.repeat = after;
  ctx.traffic.push(...(await checkTraffic(after.haproxyPods, 'repeat', 'after')));
  const failures = [
    ...differences('Secret data hash of', before.secrets, after.secrets),
    ...differences('Pod UID of', before.pods, after.pods),
    ...differences('Deployment generation/template of', before.deployments, after.deployments),
    ...differences('live config digest of', before.configDigests, after.configDigests),
    // An Argo CD sync runs the PreSync hooks again, and they must leave everything as it was;
    // Flux does not upgrade an unchanged release.
    ...(ctx.provider.resyncRunsHooks
      ? hookFailures(ctx, 'repeat', '0.0.0-gitops.1', true)
      : ctx.jobs.jobs
          .filter((j) => j.phase === 'repeat' && !j.name.startsWith(renewalCronJob))
          .map((j) => `an unchanged sync ran Job ${j.name}`)),
    ...ctx.traffic.filter((c) => c.phase === 'repeat' && !c.ok).map(describeCheck),
  ];
  return { failures, status };
}

export async function upgradePhase(ctx: PhaseContext): Promise<PhaseOutcome> {
  const before = await takeSnapshot(ctx.cli);
  const { status, snapshot: after } = await release(ctx, 'upgrade', '0.0.0-gitops.2');
  const kept = Object.keys(before.pods).filter((pod) => after.pods[pod] !== undefined);
  const failures = [
    ...differences('Secret data hash of', before.secrets, after.secrets, stableSecrets(ctx)),
    ...kept.map((pod) => `Pod ${pod} was not rolled by the upgrade`),
    ...hookFailures(ctx, 'upgrade', '0.0.0-gitops.2', true),
  ];
  return { failures, status };
}

function describeCheck(check: TrafficCheck): string {
  return `traffic ${check.moment} ${check.phase} via ${check.pod} (${check.address}) ${check.scheme}: ${check.answer}`;
}

/** The failed pre-rollout Jobs kept, and the log lines of the one that name the problem. */
async function rejectedJob(ctx: PhaseContext): Promise<string[]> {
  const jobs = await ctx.cli.kubectlJson<{
    items: { metadata: { name: string }; status?: { failed?: number } }[];
  }>(['get', 'jobs', '-n', releaseNamespace]);
  const failed = jobs.items.filter(
    (j) => j.metadata.name === preRolloutJob && (j.status?.failed ?? 0) > 0,
  );
  if (failed.length !== 1) {
    return [
      `expected exactly one failed ${preRolloutJob} Job kept, found ${String(failed.length)}`,
    ];
  }
  const log = await ctx.cli.kubectl(['logs', `job/${preRolloutJob}`, '-n', releaseNamespace]);
  const naming = log
    .split('\n')
    .filter(
      (line) => line.includes('credentials.existingSecret') && line.includes(unprovisionedSecret),
    );
  ctx.rejectionLog.push(...naming);
  return naming.length > 0
    ? []
    : [
        `kubectl logs job/${preRolloutJob} does not name credentials.existingSecret ${unprovisionedSecret}: ${log.slice(0, 500)}`,
      ];
}

export async function rejectionPhase(ctx: PhaseContext): Promise<PhaseOutcome> {
  const before = await takeSnapshot(ctx.cli);
  const probe = probeTraffic(before.haproxyPods, 'rejection');
  const failures: string[] = [];
  let status: string;
  try {
    await ctx.provider.select('0.0.0-gitops.3', rejectedValues(ctx.values));
    status = await ctx.provider.waitRefused('0.0.0-gitops.3', minutes(10));
    failures.push(...(await rejectedJob(ctx)));
  } finally {
    const during = await probe.stop();
    ctx.during.push({ phase: 'rejection', ...during });
    failures.push(...during.failures.map(describeCheck));
    if (during.rounds === 0)
      failures.push('no traffic round completed while the release was refused');
  }
  const after = await takeSnapshot(ctx.cli);
  ctx.snapshots.rejection = after;
  const checks = await checkTraffic(after.haproxyPods, 'rejection', 'after');
  ctx.traffic.push(...checks);
  const kept = (secrets: Readonly<Record<string, string>>) =>
    Object.fromEntries(Object.entries(secrets).filter(([name]) => !isReleaseBookkeeping(name)));
  failures.push(
    ...differences('Secret data hash of', kept(before.secrets), kept(after.secrets)),
    ...differences('Pod UID of', before.pods, after.pods),
    ...differences('Deployment generation/template of', before.deployments, after.deployments),
    ...differences('live config digest of', before.configDigests, after.configDigests),
    ...checks.filter((c) => !c.ok).map(describeCheck),
  );
  return { failures, status };
}

export async function recoveryPhase(ctx: PhaseContext): Promise<PhaseOutcome> {
  const original = ctx.snapshots.install;
  if (original === undefined) throw new Error('the install phase left no snapshot to compare');
  const { status, snapshot } = await release(ctx, 'recovery', '0.0.0-gitops.4');
  const failedJobs = (
    await ctx.cli.kubectlJson<{
      items: { metadata: { name: string }; status?: { failed?: number } }[];
    }>(['get', 'jobs', '-n', releaseNamespace])
  ).items.filter((j) => (j.status?.failed ?? 0) > 0);
  const failures = [
    ...differences(
      'Secret data hash (vs install) of',
      original.secrets,
      snapshot.secrets,
      stableSecrets(ctx),
    ),
    ...hookFailures(ctx, 'recovery', '0.0.0-gitops.4', true),
    ...failedJobs.map((j) => `failed Job ${j.metadata.name} still kept after the recovery`),
  ];
  return { failures, status };
}
