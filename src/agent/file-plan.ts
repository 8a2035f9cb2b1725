/** What an apply changes on disk, from the files applied last and the files wanted now. Pure. */
import { configFileName } from '../agent-api/api-types.ts';
import type { DesiredFile } from '../agent-api/apply-request.ts';

export interface AppliedFile {
  readonly path: string;
  readonly digest: string;
  readonly size: number;
}

export interface FilePlan {
  /** Files to write: new or changed, haproxy.cfg last. */
  readonly writes: readonly DesiredFile[];
  /** Paths applied before and missing now. */
  readonly removals: readonly string[];
}

/** The writes and removals that turn `current` into `desired`. */
export function planFiles(
  current: readonly AppliedFile[],
  desired: readonly DesiredFile[],
): FilePlan {
  const currentDigests = new Map(current.map((file) => [file.path, file.digest]));
  const wanted = new Set(desired.map((file) => file.path));
  const writes = desired
    .filter((file) => currentDigests.get(file.path) !== file.digest)
    .sort((a, b) => Number(a.path === configFileName) - Number(b.path === configFileName));
  const removals = current.map((file) => file.path).filter((path) => !wanted.has(path));
  return { writes, removals };
}

/** True when the plan changes nothing. */
export function planIsEmpty(plan: FilePlan): boolean {
  return plan.writes.length === 0 && plan.removals.length === 0;
}
