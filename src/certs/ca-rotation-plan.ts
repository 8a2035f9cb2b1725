/**
 * The next step of an external CA rotation, decided from both identity Secrets as found (data
 * and the rotation record), the new files' fingerprints and `now`. Pure: the caller reads, writes
 * and waits. A step that writes carries each Secret's data patch and the record, so
 * one write per Secret changes the data and records the stage together; a run killed anywhere
 * leaves Secrets from which this decides the same rotation's next step.
 */
import { sha256Fingerprint } from '../pki/index.ts';
import { decodeOptionalCertificates } from '../secrets/key-pair-secret.ts';
import { type SecretData, identitySecretKeys } from '../secrets/layout.ts';
import { encodeBase64 } from '../secrets/secret-fields.ts';
import { formatUtcTimestamp } from '../secrets/utc-timestamp.ts';
import { type SecretObject, secretLabel } from '../validation/secret-data.ts';
import {
  type PeerRole,
  type RotationRecord,
  type RotationStage,
  type RotationTargetPrints,
  parseRotationRecord,
  rotationStages,
  sameTarget,
  stageNumber,
} from './ca-rotation-record.ts';

export const peerRoles = ['controller', 'agent'] as const satisfies readonly PeerRole[];

/** One identity Secret as found; data values are base64, as `V1Secret.data` carries them. */
export interface RotationSecret extends SecretObject {
  readonly data: Readonly<Record<string, string>>;
}

/** The new material, base64-encoded as it will be written, with its fingerprints. */
export interface RotationTarget {
  readonly prints: RotationTargetPrints;
  /** ca.crt to write (the --ca file). */
  readonly ca: string;
  /** tls.crt and tls.key to write, by role. */
  readonly identities: Readonly<Record<PeerRole, { readonly crt: string; readonly key: string }>>;
}

export interface PlanInput {
  readonly target: RotationTarget;
  readonly secrets: Readonly<Record<PeerRole, RotationSecret>>;
  readonly overlapMs: number;
  readonly now: Date;
}

/** One Secret's write: the keys of `data` it sets or removes. */
export interface PlannedWrite {
  readonly role: PeerRole;
  readonly patch: DataPatch;
}

export type RotationStep =
  | { readonly action: 'refuse'; readonly message: string }
  /** Nothing to do: the rotation to these files completed. */
  | { readonly action: 'complete'; readonly record: RotationRecord }
  /** A write stage: one write per listed Secret, each with `record`. */
  | {
      readonly action: 'write';
      readonly stage: RotationStage;
      readonly record: RotationRecord;
      readonly writes: PlannedWrite[];
    }
  /** A wait stage: wait for the Pods, then record `record` on the listed Secrets. */
  | {
      readonly action: 'wait';
      readonly stage: RotationStage;
      readonly record: RotationRecord;
      readonly roles: PeerRole[];
    };

const keys = identitySecretKeys;

/** Fingerprints of the certificates under `key` of a Secret's data; none when unreadable. */
function prints(data: SecretData, key: string): string[] {
  const decoded = decodeOptionalCertificates(data, key, 'the Secret');
  return decoded.state === 'present' ? decoded.material.map(sha256Fingerprint) : [];
}

/** The guide's recovery advice when the overlap ran out before the identities were replaced. */
export function overlapExpiredAdvice(labels: string, until: Date): string {
  return (
    `The rotation's trust overlap ended at ${formatUtcTimestamp(until)} before the identities were replaced (Secrets ${labels}). ` +
    'The guide resumes an interrupted rotation at its first incomplete stage only before the overlap expires: ' +
    "once a partially completed CA rotation outlasts its overlap, authentication between controller and agents stops; the controller can't deliver routing, endpoint, or certificate updates, while running HAProxy workers retain their last configuration. " +
    'rotate-ca does not continue past an expired overlap on its own. Check every replica\'s projected files (haptic certificates status), then complete the guide\'s remaining stages by hand: "Replace identities" (tls.crt and tls.key of both Secrets together), wait for every replica, verify the controller-to-agent connection, and "Revoke the previous CA".'
  );
}

/** What the Secret's data must show once `stage` completed; a sentence when it does not. */
function dataContradicts(
  secret: RotationSecret,
  role: PeerRole,
  completed: number,
  target: RotationTarget,
): string | undefined {
  if (completed === 0) return undefined;
  const { data } = secret;
  const ca = prints(data, keys.trust);
  if (ca.length !== 1 || ca[0] !== target.prints.ca) return 'ca.crt is not the new CA';
  const revoked = completed >= stageNumber('previous-ca-revoked');
  const hasPrevious = data[keys.previousTrust] !== undefined;
  if (!revoked && !hasPrevious) return 'previous-ca.crt is missing';
  if (revoked && hasPrevious) return 'previous-ca.crt is back';
  if (
    completed >= stageNumber('identities-replaced') &&
    prints(data, keys.certificate)[0] !== target.prints[role]
  )
    return `tls.crt is not the new ${role} certificate`;
  return undefined;
}

/** A JSON merge patch of `data`: a null removes the key. */
export type DataPatch = Readonly<Record<string, string | null>>;

function dataPatch(
  stage: RotationStage,
  role: PeerRole,
  secret: RotationSecret,
  target: RotationTarget,
  until: Date,
): DataPatch {
  switch (stage.name) {
    case 'trust-distributed':
      return {
        [keys.trust]: target.ca,
        [keys.previousTrust]: secret.data[keys.trust] ?? '',
        [keys.previousTrustUntil]: encodeBase64(formatUtcTimestamp(until)),
      };
    case 'identities-replaced':
      return {
        [keys.certificate]: target.identities[role].crt,
        [keys.privateKey]: target.identities[role].key,
      };
    case 'previous-ca-revoked':
      return { [keys.previousTrust]: null, [keys.previousTrustUntil]: null };
    default:
      return {};
  }
}

/** `data` after a merge patch. */
export function patchedData(
  data: Readonly<Record<string, string>>,
  patch: DataPatch,
): Record<string, string> {
  const merged: Record<string, string | null> = { ...data, ...patch };
  return Object.fromEntries(
    Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== null),
  );
}

/** A Secret the rotation has not written yet: no other rotation in progress, and a CA that is new. */
function startProblem(secret: RotationSecret, target: RotationTarget): string | undefined {
  if (secret.data[keys.previousTrust] !== undefined)
    return `Secret ${secretLabel(secret)} still has previous-ca.crt: another CA rotation is in progress. Complete any existing rotation before starting another one (remove previous-ca.crt and previous-ca-until once every replica has its new identity).`;
  if (prints(secret.data, keys.trust).includes(target.prints.ca))
    return `ca.crt of Secret ${secretLabel(secret)} already holds the CA of --ca, and no rotation to it is recorded: renewing only leaf certificates under an unchanged CA doesn't require a trust change; update tls.crt and tls.key of each Secret together instead.`;
  return undefined;
}

/** Decides the next step. */
export function planRotation(input: PlanInput): RotationStep {
  const { target, secrets, now } = input;
  const records = {} as Record<PeerRole, RotationRecord | undefined>;
  for (const role of peerRoles) {
    const parsed = parseRotationRecord(secrets[role].annotations, secretLabel(secrets[role]));
    if (!parsed.ok) return { action: 'refuse', message: parsed.message };
    records[role] = parsed.record;
  }
  const ours = peerRoles.flatMap((role) => {
    const record = records[role];
    return record !== undefined && sameTarget(record, target.prints) ? [record] : [];
  });
  for (const role of peerRoles) {
    const record = records[role];
    if (record === undefined || record.stage === 'complete' || sameTarget(record, target.prints))
      continue;
    return {
      action: 'refuse',
      message: `Secret ${secretLabel(secrets[role])} records a rotation to another CA (SHA-256 ${record.ca}, stage ${record.stage} completed) with other files than these: finish that rotation first by rerunning rotate-ca with its files, or complete it by the guide's "Recover an interrupted rotation".`,
    };
  }
  const completed = (role: PeerRole): number => {
    const record = records[role];
    return record !== undefined && sameTarget(record, target.prints)
      ? stageNumber(record.stage)
      : 0;
  };
  const first = Math.min(...peerRoles.map(completed));
  const [anyRecord] = ours;
  if (anyRecord !== undefined && first === rotationStages.length)
    return { action: 'complete', record: anyRecord };
  for (const role of peerRoles) {
    const problem = completed(role) === 0 ? startProblem(secrets[role], target) : undefined;
    if (problem !== undefined) return { action: 'refuse', message: problem };
  }
  const until = anyRecord?.until ?? new Date(now.getTime() + input.overlapMs);
  if (ours.some((record) => record.until.getTime() !== until.getTime()))
    return {
      action: 'refuse',
      message: `The rotation records of Secrets ${peerRoles.map((r) => secretLabel(secrets[r])).join(' and ')} name different deadlines: one of them was edited. Complete the rotation by the guide's "Recover an interrupted rotation".`,
    };
  for (const role of peerRoles) {
    const contradiction = dataContradicts(secrets[role], role, completed(role), target);
    if (contradiction !== undefined)
      return {
        action: 'refuse',
        message: `Secret ${secretLabel(secrets[role])} was changed after rotate-ca recorded stage ${rotationStages[completed(role) - 1]?.name ?? ''}: ${contradiction}. Check every replica's projected files (haptic certificates status) and complete the rotation by the guide's "Recover an interrupted rotation".`,
      };
  }
  if (first < stageNumber('identities-replaced') && first > 0 && now.getTime() >= until.getTime())
    return {
      action: 'refuse',
      message: overlapExpiredAdvice(
        peerRoles.map((r) => secretLabel(secrets[r])).join(', '),
        until,
      ),
    };
  const stage = rotationStages[first];
  if (stage === undefined) return { action: 'refuse', message: 'No stage left (a defect).' };
  const behind = peerRoles.filter((role) => completed(role) < stageNumber(stage.name));
  const record: RotationRecord = { ...target.prints, stage: stage.name, until };
  if (stage.kind === 'wait') return { action: 'wait', stage, record, roles: behind };
  return {
    action: 'write',
    stage,
    record,
    writes: behind.map((role) => ({
      role,
      patch: dataPatch(stage, role, secrets[role], target, until),
    })),
  };
}
