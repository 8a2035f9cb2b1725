/**
 * The agent's record of what it applied last: generation, time and file digests. Written
 * atomically after every successful apply, read at start, so a restarted agent reports the
 * configuration HAProxy still runs.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describeError } from '../errors.ts';
import { pathProblem } from '../agent-api/apply-request.ts';
import { replaceDurably } from './durable-write.ts';
import type { AppliedFile } from './file-plan.ts';
import { isRecord } from '../is-record.ts';

export interface AppliedState {
  /** Counts applied changes; 0 before the first. */
  readonly generation: number;
  readonly appliedAt: Date | undefined;
  /** Files written by the last apply, sorted by path. */
  readonly files: readonly AppliedFile[];
}

export const emptyState: AppliedState = { generation: 0, appliedAt: undefined, files: [] };

const digestPattern = /^sha256:[0-9a-f]{64}$/;

function parseFile(value: unknown): AppliedFile | undefined {
  if (!isRecord(value)) return undefined;
  const { path, digest, size } = value;
  if (typeof path !== 'string' || pathProblem(path) !== undefined) return undefined;
  if (typeof digest !== 'string' || !digestPattern.test(digest)) return undefined;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return undefined;
  return { path, digest, size };
}

/** Decodes the state file's JSON; a sentence when it is not a state. */
export function parseAppliedState(value: unknown): AppliedState | string {
  if (!isRecord(value)) return 'it is not a JSON object';
  const { generation, appliedAt, files } = value;
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 0) {
    return '"generation" is not a whole number';
  }
  const at = typeof appliedAt === 'string' ? new Date(appliedAt) : undefined;
  if (at !== undefined && Number.isNaN(at.getTime())) return '"appliedAt" is not a time';
  if (!Array.isArray(files)) return '"files" is not an array';
  const parsed = (files as readonly unknown[]).map(parseFile);
  const valid = parsed.filter((file) => file !== undefined);
  if (valid.length !== parsed.length) return '"files" has an invalid entry';
  return { generation, appliedAt: at, files: valid };
}

export function serializeState(state: AppliedState): string {
  return `${JSON.stringify(
    {
      generation: state.generation,
      appliedAt: state.appliedAt?.toISOString(),
      files: state.files,
    },
    null,
    2,
  )}\n`;
}

export type StateRead =
  | { readonly found: true; readonly state: AppliedState }
  | { readonly found: false; readonly problem?: string };

/** Reads the state file; missing or unreadable files are reported, not thrown. */
export async function readStateFile(path: string): Promise<StateRead> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT')
      return { found: false };
    return { found: false, problem: `${path} cannot be read: ${describeError(error)}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { found: false, problem: `${path} is not JSON: ${describeError(error)}` };
  }
  const state = parseAppliedState(json);
  return typeof state === 'string'
    ? { found: false, problem: `${path} is not an agent state file: ${state}` }
    : { found: true, state };
}

/** Writes the state file atomically and durably (durable-write.ts). */
export async function writeStateFile(path: string, state: AppliedState): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await replaceDurably(path, serializeState(state), 0o600);
}
