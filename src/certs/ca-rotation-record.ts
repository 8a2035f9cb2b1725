/**
 * The stages of an external CA rotation (agent-certificates.txt, "Rotate a certificate
 * authority") and the record `haptic certificates rotate-ca` keeps of them: the annotation
 * `haptic.haproxy.org/ca-rotation` on both identity Secrets, whose JSON value names the last
 * completed stage, the new CA and both new leaves (SHA-256 fingerprints, lower-case hex) and
 * the overlap deadline. A rerun reads it to resume at the first incomplete stage.
 */
import { formatUtcTimestamp, parseUtcTimestamp } from '../secrets/utc-timestamp.ts';

/** The two peers: `agent` (haptic-haproxy, serverAuth), `controller` (clientAuth). */
export type PeerRole = 'controller' | 'agent';

/** The annotation on both identity Secrets. */
export const caRotationAnnotation = 'haptic.haproxy.org/ca-rotation';

/**
 * The stages in the guide's order; each name says what is true once it completed. `write`
 * stages change the Secrets' data (the record goes in the same write); `wait` stages watch
 * what the Pods report and then record themselves.
 */
export const rotationStages = [
  { name: 'trust-distributed', kind: 'write', title: 'overlapping trust distributed' },
  { name: 'trust-loaded', kind: 'wait', title: 'every replica trusts the new and previous CA' },
  { name: 'identities-replaced', kind: 'write', title: 'identities replaced' },
  { name: 'identities-loaded', kind: 'wait', title: 'every replica presents its new identity' },
  {
    name: 'exchange-verified',
    kind: 'wait',
    title: 'authenticated controller-to-agent exchange with the new identities',
  },
  { name: 'previous-ca-revoked', kind: 'write', title: 'previous CA revoked' },
  { name: 'complete', kind: 'wait', title: 'every replica trusts only the new CA' },
] as const;

export type RotationStage = (typeof rotationStages)[number];
export type RotationStageName = RotationStage['name'];

/** 1-based position of a stage; 0 stands for "none completed". */
export function stageNumber(name: RotationStageName): number {
  return rotationStages.findIndex((stage) => stage.name === name) + 1;
}

/** What a rotation is moving to: fingerprints of the new CA and of both new leaves. */
export interface RotationTargetPrints {
  readonly ca: string;
  readonly agent: string;
  readonly controller: string;
}

export interface RotationRecord extends RotationTargetPrints {
  /** The last completed stage. */
  readonly stage: RotationStageName;
  /** previous-ca-until of the rotation. */
  readonly until: Date;
}

export type RecordParse =
  | { readonly ok: true; readonly record: RotationRecord | undefined }
  | { readonly ok: false; readonly message: string };

const fingerprint = /^[0-9a-f]{64}$/;

/** Reads the record from a Secret's annotations (absent: undefined). */
export function parseRotationRecord(
  annotations: Readonly<Record<string, string>>,
  secret: string,
): RecordParse {
  const text = annotations[caRotationAnnotation];
  if (text === undefined) return { ok: true, record: undefined };
  const bad = (why: string): RecordParse => ({
    ok: false,
    message: `Annotation ${caRotationAnnotation} of Secret ${secret} is not a rotation record (${why}): remove the annotation only if no rotation is in progress, then run again.`,
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return bad('not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return bad('not an object');
  const body = value as Record<string, unknown>;
  const stage = rotationStages.find((s) => s.name === body.stage);
  if (stage === undefined) return bad('unknown stage');
  const prints = ['ca', 'agent', 'controller'] as const;
  for (const key of prints) {
    const print = body[key];
    if (typeof print !== 'string' || !fingerprint.test(print))
      return bad(`${key} is not a SHA-256 fingerprint`);
  }
  const until = typeof body.until === 'string' ? parseUtcTimestamp(body.until) : undefined;
  if (until === undefined) return bad('until is not an RFC 3339 UTC time');
  return {
    ok: true,
    record: {
      stage: stage.name,
      ca: String(body.ca),
      agent: String(body.agent),
      controller: String(body.controller),
      until,
    },
  };
}

/** The annotation value of a record. */
export function formatRotationRecord(record: RotationRecord): string {
  return JSON.stringify({
    stage: record.stage,
    ca: record.ca,
    agent: record.agent,
    controller: record.controller,
    until: formatUtcTimestamp(record.until),
  });
}

/** Whether a record is of a rotation to these files. */
export function sameTarget(record: RotationTargetPrints, target: RotationTargetPrints): boolean {
  return (
    record.ca === target.ca &&
    record.agent === target.agent &&
    record.controller === target.controller
  );
}
