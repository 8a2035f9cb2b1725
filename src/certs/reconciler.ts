/**
 * The default provider's renewal run (`haptic certificates renew`): read the issuer and both
 * identity Secrets, refuse Secrets of another provider, let the policy decide, carry the
 * decision out write by write, and decide again on what was written until nothing is due.
 *
 * Only the three named Secrets are read (get) or written (create, or update conditional on
 * the resourceVersion read), matching the Jobs' RBAC. Nothing due costs three reads and no
 * write. Each write persists a state the policy resumes from, so a run killed after any write
 * and rerun completes the same generation; a write that loses a race ends the run.
 *
 * During a CA rotation's overlap (just begun by this run or found open), the run reads what
 * the replicas report (`replica-reports.ts`) and waits, up to `convergence.timeoutMs`, until
 * every one reports the new CA and identities; the policy then removes the previous CA before
 * its deadline. A run that times out leaves the clean-up to the deadline and names the
 * replicas that lag. Reports that cannot be read (say, RBAC of an older chart) only delay the
 * clean-up to the deadline.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { statusRows } from './status-rows.ts';
import type { ReplicaReportSource } from './replica-reports.ts';
import { sha256Fingerprint } from '../pki/index.ts';
import { type ExpectedTrust, expectedTrustOf } from './expected-trust.ts';
import {
  type ReplicaConvergence,
  type ReplicaRole,
  everyReplicaConverged,
  laggingReplicas,
  replicaConvergence,
} from './replica-convergence.ts';
import type { RenewalInput } from './renewal-input.ts';
import type { Violation } from './reasons.ts';
import { type PlannedWrite, planWrites } from './renewal-plan.ts';
import { type RenewalDecision, decideRenewal } from './renewal-policy.ts';
import { type RenewalSettings, renewalInputOf } from './renewal-run-input.ts';
import { type RenewalTarget, renewalTargets, targetLabels } from './renewal-targets.ts';
import { secretBody } from './secret-bodies.ts';
import { type SecretSnapshot, ownershipRefusal } from './secret-ownership.ts';

/** The Secret operations a run needs (implemented by `src/kube/secrets.ts`). */
export interface SecretStore {
  read(name: string): Promise<V1Secret | undefined>;
  create(body: V1Secret): Promise<V1Secret>;
  replace(body: V1Secret): Promise<V1Secret>;
}

/** How a run waits for the replicas before ending a rotation's overlap early. */
export interface ConvergenceWait {
  readonly reports: ReplicaReportSource;
  /** How long to keep reading the reports until every replica converged. */
  readonly timeoutMs: number;
  /** Pause between two reads. */
  readonly intervalMs: number;
}

export interface RenewOptions extends RenewalSettings {
  /** The run's clock: every threshold is judged and everything issued at this moment. */
  readonly now: Date;
  /** Called after each write with the number of writes so far (fault injection, progress). */
  readonly afterWrite?: (writes: number) => void;
  /** Without it, a rotation's overlap always lasts until its deadline. */
  readonly convergence?: ConvergenceWait;
}

export interface RenewResult {
  /** Every decision of the run, in order; the last is `none`. */
  readonly decisions: readonly RenewalDecision[];
  /** Secrets created or replaced. */
  readonly writes: number;
  /** The CA generation current at the end. */
  readonly generation: number;
}

/**
 * Decide-and-act passes before the run gives up; every decision path converges in three, plus
 * one that waits for the replicas.
 */
const maxPasses = 6;

function namedSecret(options: RenewOptions, target: RenewalTarget): string {
  return `${options.secrets.namespace}/${options.secrets[target]}`;
}

async function readSnapshot(store: SecretStore, options: RenewOptions): Promise<SecretSnapshot> {
  const [issuer, server, client] = await Promise.all(
    renewalTargets.map((target) => store.read(options.secrets[target])),
  );
  return { issuer, server, client };
}

function logDecision(logger: Logger, decision: RenewalDecision, options: RenewOptions): void {
  const fields = {
    event: 'decision',
    action: decision.action,
    reason: decision.reason,
    generation: decision.generation,
    secrets: decision.identities.map((role) => namedSecret(options, role)),
    violations: decision.violations.map(({ reason, role, message }) => ({
      reason,
      ...(role === undefined ? {} : { secret: namedSecret(options, role) }),
      message,
    })),
    nextRenewal: decision.nextRenewal?.toISOString(),
  };
  if (decision.action === 'refuse') logger.error(fields, decision.message);
  else logger.info(fields, decision.message);
}

function refused(logger: Logger, { reason, message }: Violation): HapticError {
  logger.error({ event: 'decision', action: 'refuse', reason }, message);
  return new HapticError(errorCodes.CERTS_REFUSED, message);
}

/** Writes one planned Secret: creates it when absent, else replaces the version read. */
async function write(
  store: SecretStore,
  planned: PlannedWrite,
  existing: V1Secret | undefined,
  options: RenewOptions,
  done: number,
): Promise<V1Secret> {
  const body = secretBody(planned, options.secrets, existing);
  try {
    return existing === undefined ? await store.create(body) : await store.replace(body);
  } catch (error) {
    if (error instanceof HapticError && error.code === errorCodes.KUBE_CONFLICT) {
      throw new HapticError(
        errorCodes.KUBE_CONFLICT,
        `${error.message} Another renewal run or a user wrote it concurrently; this run stopped after ${done} write(s). ` +
          'Rerun it: it resumes from the stored state.',
        { cause: error },
      );
    }
    throw error;
  }
}

/** What each role's Pods should report now: the identity Secrets as read, and the issuer's CA. */
interface ConvergenceExpectation {
  /** The agents mount the server identity, the controllers the client identity. */
  readonly expected: Readonly<Record<ReplicaRole, ExpectedTrust>>;
  readonly issuerCa: string;
}

function expectationOf(
  snapshot: SecretSnapshot,
  input: RenewalInput,
  options: RenewOptions,
): ConvergenceExpectation | undefined {
  if (input.issuer.state !== 'present') return undefined;
  const named = (name: string): string => `${options.secrets.namespace}/${name}`;
  return {
    expected: {
      agent: expectedTrustOf(
        named(options.secrets.server),
        snapshot.server?.data ?? {},
        options.now,
      ),
      controller: expectedTrustOf(
        named(options.secrets.client),
        snapshot.client?.data ?? {},
        options.now,
      ),
    },
    issuerCa: sha256Fingerprint(input.issuer.material.certificate),
  };
}

/**
 * Reads the replicas' reports until every replica converged, the wait's time is up, or there
 * is no replica to wait for; returns the last judgement.
 */
async function awaitConvergence(
  wait: ConvergenceWait,
  expectation: ConvergenceExpectation,
  options: RenewOptions,
  logger: Logger,
): Promise<ReplicaConvergence> {
  const started = performance.now();
  const secrets = { agent: options.secrets.server, controller: options.secrets.client };
  logger.info(
    { event: 'convergence-wait', timeoutMs: wait.timeoutMs },
    `Waiting up to ${Math.round(wait.timeoutMs / 1000)}s for every replica to report the new CA and identities.`,
  );
  for (;;) {
    let convergence: ReplicaConvergence;
    try {
      const reports = await wait.reports.read(secrets);
      // Judged as `haptic certificates status` judges each row, without an expiry window.
      const rows = statusRows({ ...reports, ...expectation, now: options.now, withinMs: 0 });
      convergence = replicaConvergence(rows, reports.problems, expectation.expected);
    } catch (error) {
      const message = `The replicas' reports could not be read (${describeError(error)}); the previous CA is removed at the overlap's deadline.`;
      logger.warn({ event: 'convergence', converged: false }, message);
      return { replicas: [], problems: [message] };
    }
    const elapsedMs = Math.round(performance.now() - started);
    const converged = everyReplicaConverged(convergence);
    if (converged || convergence.replicas.length === 0 || elapsedMs >= wait.timeoutMs) {
      const fields = {
        event: 'convergence',
        converged,
        replicas: convergence.replicas.length,
        lagging: laggingReplicas(convergence).map(({ pod, role }) => ({ pod, role })),
        elapsedMs,
      };
      if (converged)
        logger.info(
          fields,
          `Every replica (${convergence.replicas.length}) reports the new CA and identities.`,
        );
      else
        logger.warn(
          fields,
          `Not every replica reports the new CA and identities after ${Math.round(elapsedMs / 1000)}s.`,
        );
      return convergence;
    }
    await sleep(wait.intervalMs);
  }
}

/** Runs the renewal to completion; throws `CERTS_REFUSED`, `KUBE_CONFLICT` or a request error. */
export async function renewCertificates(
  store: SecretStore,
  options: RenewOptions,
  logger: Logger,
): Promise<RenewResult> {
  let snapshot = await readSnapshot(store, options);
  const decisions: RenewalDecision[] = [];
  let writes = 0;
  let convergence: ReplicaConvergence | undefined;
  for (let pass = 0; pass < maxPasses; pass += 1) {
    const refusal = ownershipRefusal(snapshot, options.secrets);
    if (refusal !== undefined) throw refused(logger, refusal);
    const read = renewalInputOf(snapshot, options);
    const input = convergence === undefined ? read : { ...read, convergence };
    const decision = decideRenewal(input, options.now);
    const expectation = expectationOf(snapshot, input, options);
    if (
      decision.awaitingConvergenceUntil !== undefined &&
      convergence === undefined &&
      options.convergence !== undefined &&
      expectation !== undefined
    ) {
      // Decide again once the replicas' reports are known.
      convergence = await awaitConvergence(options.convergence, expectation, options, logger);
      continue;
    }
    decisions.push(decision);
    logDecision(logger, decision, options);
    if (decision.action === 'refuse') {
      throw new HapticError(errorCodes.CERTS_REFUSED, decision.message);
    }
    if (decision.action === 'none') {
      return { decisions, writes, generation: decision.generation ?? 0 };
    }
    const context = { names: options.names, validityDays: decision.validityDays, now: options.now };
    for (const planned of await planWrites(decision, input, context)) {
      const existing = snapshot[planned.target];
      const written = await write(store, planned, existing, options, writes);
      snapshot = { ...snapshot, [planned.target]: written };
      writes += 1;
      logger.info(
        {
          event: 'write',
          action: decision.action,
          secret: namedSecret(options, planned.target),
          operation: existing === undefined ? 'create' : 'replace',
          generation: decision.generation,
          resourceVersion: written.metadata?.resourceVersion,
        },
        `${existing === undefined ? 'Created' : 'Replaced'} Secret ${namedSecret(options, planned.target)} ` +
          `(${targetLabels[planned.target]}, CA generation ${decision.generation ?? '?'}).`,
      );
      options.afterWrite?.(writes);
    }
  }
  throw new HapticError(
    errorCodes.CERTS_NOT_CONVERGED,
    `The renewal still had work after ${maxPasses} passes (last: ${decisions.at(-1)?.action ?? 'none'}); this is a defect, report it with this run's log.`,
  );
}
