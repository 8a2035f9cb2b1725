/**
 * What the default certificate provider's renewal Job must do, decided purely from the
 * Secrets' contents, the configuration and `now`. The Job acts on the decision, reads the
 * Secrets again and decides again, until the decision is `none` (or `refuse`).
 *
 * The protocol the decisions assume (keys in `secret-material.ts`):
 * - Everything issued lasts `validityDays`, the CA included; leaves are clamped to their CA,
 *   so the CA and the identities issued with it fall due together.
 * - `rotate-ca` writes the issuer Secret first (new CA and key, generation + 1, the previous
 *   CA, the new CA cross-signed by the previous one until `overlapUntil`, and that deadline),
 *   then each identity: tls.crt = leaf + cross-signed CA, ca.crt = new CA, previous-ca.crt =
 *   previous CA, previous-ca-until = `overlapUntil`. A Job interrupted after the first write
 *   resumes with `reissue-identities` under the stored generation, never with another CA.
 * - After the deadline peers stop trusting the previous CA on their own; `cleanup-previous-ca`
 *   then removes the leftovers. It comes earlier when `input.convergence` says every current
 *   replica of both Deployments reports the new CA and identities (no one needs the previous
 *   CA any more); the issuer Secret then forgets the rotation first, so an interrupted
 *   clean-up resumes as an ordinary one.
 */
import type { Problem } from '../problem.ts';
import { type RenewalReason, type Violation, renewalReasons } from './reasons.ts';
import { identityChecks, identityCleanupChecks } from './identity-checks.ts';
import {
  caRotationChecks,
  issuerCleanupChecks,
  nothingIssued,
  refusalChecks,
} from './issuer-checks.ts';
import {
  type Check,
  type IdentityContext,
  type IssuedContext,
  type PolicyContext,
  firstViolation,
} from './policy-chain.ts';
import { type IdentityRole, identityRoles } from '../secrets/material.ts';
import { type RenewalInput } from './renewal-input.ts';
import { renewalTime } from './renewal-time.ts';
import { convergenceGaps } from './replica-convergence.ts';

/** Validity of newly issued certificates when none is configured, in days. @default 365 */
export const defaultValidityDays = 365;

/** How long, after a CA rotation, the previous CA is still trusted and the cross-signature valid. @default 1 hour */
export const trustOverlapMs = 3_600_000;

/**
 * - `none`: everything is valid and not due.
 * - `bootstrap`: create the CA (generation 1) and both identities.
 * - `rotate-ca`: create a new CA and key (next generation), store it with the previous CA,
 *   the cross-signature and `overlapUntil` in the issuer Secret first, then issue both identities.
 * - `reissue-identities`: issue the listed identities with new keys under the stored CA.
 * - `cleanup-previous-ca`: drop previous-CA trust and the cross-signed CA from the listed
 *   identity Secrets, then the rotation state from the issuer Secret.
 * - `refuse`: change nothing and fail; the message says what the operator must repair.
 */
export type RenewalAction =
  'none' | 'bootstrap' | 'rotate-ca' | 'reissue-identities' | 'cleanup-previous-ca' | 'refuse';

/** A violation with the identity it concerns, if any. */
export interface DecisionViolation extends Violation {
  readonly role?: IdentityRole;
}

/**
 * The action, and as its problem the reason and sentence of the first violation, or `UpToDate`
 * and the next renewal time when nothing is due.
 */
export interface RenewalDecision extends Problem<RenewalReason> {
  readonly action: RenewalAction;
  /** Identity Secrets the action writes: both for bootstrap and rotate-ca, the failing ones otherwise. */
  readonly identities: readonly IdentityRole[];
  /** Every violation behind the action, in check order; empty for `none`. */
  readonly violations: readonly DecisionViolation[];
  /** Generation the action leaves current: 1 for bootstrap, the next for rotate-ca. Absent for refuse. */
  readonly generation?: number;
  /** Validity, in days, of anything the action issues. @default 365 */
  readonly validityDays: number;
  /**
   * End of the trust overlap to write with what the action issues: for `rotate-ca` one hour
   * from `now` (never after the old CA expires; absent if it already has); for
   * `reissue-identities` the open overlap of the stored rotation, if any.
   */
  readonly overlapUntil?: Date;
  /** For `none`: when the next renewal or clean-up becomes due if nothing changes. */
  readonly nextRenewal?: Date;
  /**
   * For `none` during a rotation's overlap: its deadline. The previous CA is removed then at
   * the latest, earlier once `input.convergence` shows every replica on the new identities.
   */
  readonly awaitingConvergenceUntil?: Date;
}

interface Common {
  readonly validityDays: number;
  readonly generation?: number;
}

type Violations = readonly [DecisionViolation, ...DecisionViolation[]];

function decide(
  action: RenewalAction,
  common: Common,
  violations: Violations,
  identities: readonly IdentityRole[],
): RenewalDecision {
  const [{ reason, message }] = violations;
  return { ...common, action, reason, message, identities, violations };
}

function nonEmpty(violations: readonly DecisionViolation[]): Violations | undefined {
  const [first, ...rest] = violations;
  return first === undefined ? undefined : [first, ...rest];
}

function identityViolations(
  context: IssuedContext,
  checks: readonly Check<IdentityContext>[],
): DecisionViolation[] {
  return identityRoles.flatMap((role) => {
    const found = firstViolation(
      { ...context, role, identity: context.input.identities[role] },
      checks,
    );
    return found === undefined ? [] : [{ ...found, role }];
  });
}

function rolesOf(violations: readonly DecisionViolation[]): IdentityRole[] {
  return identityRoles.filter((role) => violations.some((found) => found.role === role));
}

function earliest(dates: readonly Date[]): Date | undefined {
  return dates.reduce<Date | undefined>(
    (soonest, date) =>
      soonest === undefined || date.getTime() < soonest.getTime() ? date : soonest,
    undefined,
  );
}

/** When the next check finds something to do, with everything as it is now. */
function nextRenewal(context: IssuedContext): Date | undefined {
  const { issuer, overlap, input } = context;
  const dates = overlap === undefined ? [renewalTime(issuer.certificate)] : [overlap.until];
  for (const role of identityRoles) {
    const identity = input.identities[role];
    if (identity.state === 'present') dates.push(renewalTime(identity.material.chain[0]));
  }
  return earliest(dates);
}

/** Decides what the renewal Job must do now. Pure: no I/O, no clock besides `now`. */
export function decideRenewal(input: RenewalInput, now: Date): RenewalDecision {
  const validityDays = input.validityDays ?? defaultValidityDays;
  const policy: PolicyContext = { input, now, validityDays };

  const refusal = firstViolation(policy, refusalChecks());
  if (refusal !== undefined) return decide('refuse', { validityDays }, [refusal], []);

  if (input.issuer.state !== 'present') {
    // After the refusals, an issuer that is not present is absent, and so is every identity.
    return decide(
      'bootstrap',
      { validityDays, generation: 1 },
      [nothingIssued(input)],
      identityRoles,
    );
  }

  const issuer = input.issuer.material;
  const rotation = issuer.rotation;
  const overlap =
    rotation !== undefined && now.getTime() < rotation.until.getTime() ? rotation : undefined;
  const context: IssuedContext = { ...policy, issuer, overlap };
  const current = { validityDays, generation: issuer.generation };

  if (overlap === undefined) {
    const rotate = firstViolation(context, caRotationChecks());
    if (rotate !== undefined) {
      const until = Math.min(now.getTime() + trustOverlapMs, issuer.certificate.notAfter.getTime());
      const next = { validityDays, generation: issuer.generation + 1 };
      const decision = decide('rotate-ca', next, [rotate], identityRoles);
      return until > now.getTime() ? { ...decision, overlapUntil: new Date(until) } : decision;
    }
  }

  const reissue = nonEmpty(identityViolations(context, identityChecks()));
  if (reissue !== undefined) {
    const decision = decide('reissue-identities', current, reissue, rolesOf(reissue));
    return overlap === undefined ? decision : { ...decision, overlapUntil: overlap.until };
  }

  const issuerCleanup = firstViolation(context, issuerCleanupChecks());
  // A rotation the issuer checks end (deadline passed, or every replica converged) is over for
  // the identities too.
  const ended = issuerCleanup === undefined ? context : { ...context, overlap: undefined };
  const identityCleanup = identityViolations(ended, identityCleanupChecks());
  const cleanup = nonEmpty(
    issuerCleanup === undefined ? identityCleanup : [issuerCleanup, ...identityCleanup],
  );
  if (cleanup !== undefined) {
    return decide('cleanup-previous-ca', current, cleanup, rolesOf(identityCleanup));
  }

  const next = nextRenewal(context);
  const message =
    `The CA (generation ${issuer.generation}) and both identities are valid and not due` +
    (next === undefined ? '.' : `; the next renewal is due at ${next.toISOString()}.`);
  const upToDate: RenewalDecision = {
    ...current,
    action: 'none',
    reason: renewalReasons.UpToDate,
    message: overlap === undefined ? message : `${message} ${overlapPending(overlap.until, input)}`,
    identities: [],
    violations: [],
  };
  const withOverlap =
    overlap === undefined ? upToDate : { ...upToDate, awaitingConvergenceUntil: overlap.until };
  return next === undefined ? withOverlap : { ...withOverlap, nextRenewal: next };
}

/** Why the previous CA stays during an open overlap, naming the replicas that hold it up. */
function overlapPending(until: Date, input: RenewalInput): string {
  const deadline = `The previous CA stays trusted until ${until.toISOString()} and is removed then at the latest`;
  return input.convergence === undefined
    ? `${deadline}; replica reports were not read.`
    : `${deadline}, earlier once every current replica reports the new CA and identities. ${convergenceGaps(input.convergence)}`;
}
