/**
 * The previous-CA deadline (`previous-ca-until`) of an identity or issuer Secret: a deadline
 * set now must lie ahead and at most 24 hours away; a stored one that has passed no longer
 * grants trust and should be removed.
 */
import { maxPreviousTrustAheadMs } from '../secrets/layout.ts';
import { formatUtcTimestamp } from '../secrets/utc-timestamp.ts';
import { validationCodes } from './codes.ts';
import { type Check, type Finding, error, everyFinding, secretPath, warning } from './finding.ts';

export interface DeadlineSubject {
  readonly name: string;
  readonly label: string;
  /** previous-ca-until after the write (or as found), if any. */
  readonly until: Date | undefined;
  /** previous-ca-until before the write, if any. */
  readonly before: Date | undefined;
  /** `write`: the Secret is being written now; `live`: as found in the cluster. */
  readonly mode: 'write' | 'live';
  readonly now: Date;
}

const untilPath = (name: string): string => secretPath(name, 'previous-ca-until');

/** True when this write sets previous-ca-until (a new value, not the one already stored). */
function deadlineIsNew({ until, before, mode }: DeadlineSubject): boolean {
  return mode === 'write' && until !== undefined && before?.getTime() !== until.getTime();
}

export const previousTrustDeadlinePassed: Check<DeadlineSubject> = (subject) => {
  const { until, now } = subject;
  return until !== undefined && deadlineIsNew(subject) && until.getTime() <= now.getTime()
    ? error(
        validationCodes.PreviousTrustDeadlinePassed,
        untilPath(subject.name),
        `previous-ca-until of Secret ${subject.label} is ${formatUtcTimestamp(until)}, which is not in the future: set a deadline ahead of now and at most 24 hours away, or remove previous-ca.crt and previous-ca-until.`,
      )
    : undefined;
};

export const previousTrustDeadlineTooFar: Check<DeadlineSubject> = ({ name, label, until, now }) =>
  until !== undefined && until.getTime() - now.getTime() > maxPreviousTrustAheadMs
    ? error(
        validationCodes.PreviousTrustDeadlineTooFar,
        untilPath(name),
        `previous-ca-until of Secret ${label} is ${formatUtcTimestamp(until)}, more than 24 hours after ${formatUtcTimestamp(now)}: HAPTIC rejects deadlines more than 24 hours away; choose a deadline within 24 hours, for example one hour ahead.`,
      )
    : undefined;

export const previousTrustExpired: Check<DeadlineSubject> = (subject) => {
  const { until, now } = subject;
  return until !== undefined && !deadlineIsNew(subject) && until.getTime() <= now.getTime()
    ? warning(
        validationCodes.PreviousTrustExpired,
        untilPath(subject.name),
        `previous-ca.crt of Secret ${subject.label} stopped granting trust at ${formatUtcTimestamp(until)}; remove previous-ca.crt and previous-ca-until.`,
      )
    : undefined;
};

export function deadlineChecks(): readonly Check<DeadlineSubject>[] {
  return [previousTrustDeadlinePassed, previousTrustDeadlineTooFar, previousTrustExpired];
}

export function checkDeadline(subject: DeadlineSubject): Finding[] {
  return everyFinding(subject, deadlineChecks());
}
