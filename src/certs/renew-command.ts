/**
 * `haptic certificates renew` as a process: Kubernetes client from --kubeconfig or the
 * environment, JSON logs on stdout (one line per decision and per write, then a summary with
 * the API requests the run sent), one clear line on stderr when it fails. Returns the exit
 * code: 0 done or nothing to do, 1 refused or failed.
 */
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { HapticError, describeError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { makeApiClient } from '../kube/api-client.ts';
import { loadKubeConfig } from '../kube/kube-config.ts';
import { RequestCounter } from '../kube/request-counter.ts';
import { SecretClient } from '../kube/secrets.ts';
import { readPackageVersion } from '../version.ts';
import { ClusterReplicaReports } from './replica-reports.ts';
import { renewCertificates } from './reconciler.ts';
import type { RenewalSettings } from './renewal-run-input.ts';

export interface RenewCommandOptions extends RenewalSettings {
  readonly kubeconfig?: string | undefined;
  /** The run's clock. @default the system clock at start */
  readonly now?: Date | undefined;
  /**
   * Fault injection: the process kills itself (SIGKILL) right after this many writes, as a
   * Job killed at that point would end. Shows that a rerun completes the same generation.
   */
  readonly exitAfterWrites?: number | undefined;
  /**
   * How long a run in a CA rotation's overlap waits for every replica to report the new CA
   * and identities before leaving the clean-up to the deadline; 0 reads the reports once.
   * Well under the Jobs' deadlines (300 s for the bootstrap hook, 600 s for the CronJob's).
   * @default 120 000 (two minutes)
   */
  readonly convergenceTimeoutMs?: number | undefined;
}

/** @see RenewCommandOptions.convergenceTimeoutMs */
export const defaultConvergenceTimeoutMs = 120_000;

/** Pause between two reads of the replicas' reports. */
const convergenceIntervalMs = 2_000;

/** Runs the renewal; returns the process exit code. */
export async function runRenewCommand(options: RenewCommandOptions): Promise<number> {
  const logger = createLogger({ component: 'certificates renew', sync: true });
  const counter = new RequestCounter();
  const started = performance.now();
  try {
    const kc = loadKubeConfig(options.kubeconfig);
    const client = { counter, userAgent: `haptic/${readPackageVersion()} (certificates renew)` };
    const core = makeApiClient(kc, CoreV1Api, client);
    const reports = new ClusterReplicaReports(
      makeApiClient(kc, AppsV1Api, client),
      core,
      makeApiClient(kc, CustomObjectsApi, client),
      options.secrets.namespace,
    );
    const { exitAfterWrites } = options;
    const result = await renewCertificates(
      new SecretClient(core, options.secrets.namespace),
      {
        ...options,
        now: options.now ?? new Date(),
        convergence: {
          reports,
          timeoutMs: options.convergenceTimeoutMs ?? defaultConvergenceTimeoutMs,
          intervalMs: convergenceIntervalMs,
        },
        afterWrite: (writes) => {
          if (writes === exitAfterWrites) {
            logger.warn(
              { event: 'fault-injection', writes },
              `Killing the run after ${writes} write(s).`,
            );
            process.kill(process.pid, 'SIGKILL');
          }
        },
      },
      logger,
    );
    const overlapUntil = result.decisions.at(-1)?.awaitingConvergenceUntil;
    const pending =
      overlapUntil === undefined
        ? ''
        : ` The previous CA stays trusted until ${overlapUntil.toISOString()}: not every replica reports the new identities yet (see the last decision).`;
    logger.info(
      {
        event: 'finished',
        writes: result.writes,
        generation: result.generation,
        previousCaUntil: overlapUntil?.toISOString(),
        requests: counter.counts(),
        durationMs: Math.round(performance.now() - started),
      },
      (result.writes === 0
        ? `Nothing to do: the CA (generation ${result.generation}) and both identities are up to date.`
        : `Wrote ${result.writes} Secret(s); the CA (generation ${result.generation}) and both identities are up to date.`) +
        pending,
    );
    return 0;
  } catch (error) {
    const code = error instanceof HapticError ? error.code : undefined;
    logger.error(
      {
        event: 'failed',
        code,
        requests: counter.counts(),
        durationMs: Math.round(performance.now() - started),
      },
      describeError(error),
    );
    process.stderr.write(`haptic: ${describeError(error)}\n`);
    return 1;
  }
}
