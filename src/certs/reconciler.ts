/**
 * The default provider's renewal run (`haptic certificates renew`): read the issuer and both
 * identity Secrets, refuse Secrets of another provider, let the policy decide, carry the
 * decision out write by write, and decide again on what was written until nothing is due.
 *
 * Only the three named Secrets are read (get) or written (create, or update conditional on
 * the resourceVersion read), matching the Jobs' RBAC. Nothing due costs three reads and no
 * write. Each write persists a state the policy resumes from, so a run killed after any write
 * and rerun completes the same generation; a write that loses a race ends the run.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { HapticError, errorCodes } from '../errors.ts';
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

export interface RenewOptions extends RenewalSettings {
  /** The run's clock: every threshold is judged and everything issued at this moment. */
  readonly now: Date;
  /** Called after each write with the number of writes so far (fault injection, progress). */
  readonly afterWrite?: (writes: number) => void;
}

export interface RenewResult {
  /** Every decision of the run, in order; the last is `none`. */
  readonly decisions: readonly RenewalDecision[];
  /** Secrets created or replaced. */
  readonly writes: number;
  /** The CA generation current at the end. */
  readonly generation: number;
}

/** Decide-and-act passes before the run gives up; every decision path converges in three. */
const maxPasses = 5;

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

/** Runs the renewal to completion; throws `CERTS_REFUSED`, `KUBE_CONFLICT` or a request error. */
export async function renewCertificates(
  store: SecretStore,
  options: RenewOptions,
  logger: Logger,
): Promise<RenewResult> {
  let snapshot = await readSnapshot(store, options);
  const decisions: RenewalDecision[] = [];
  let writes = 0;
  for (let pass = 0; pass < maxPasses; pass += 1) {
    const refusal = ownershipRefusal(snapshot, options.secrets);
    if (refusal !== undefined) throw refused(logger, refusal);
    const input = renewalInputOf(snapshot, options);
    const decision = decideRenewal(input, options.now);
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
