/**
 * Parsing an apply request (hostile input) into files the agent may write: every path
 * confined to the base directory, every size and count bounded, every digest checked. Errors
 * name the field and say what to fix.
 */
import { createHash } from 'node:crypto';
import { configFileName } from './api-types.ts';
import { type AgentFailure, type AgentReason, agentReasons } from './reasons.ts';
import { isRecord } from '../is-record.ts';

/** Bounds of one apply request. */
export interface ApplyLimits {
  /** @default 10000 */
  readonly maxFiles: number;
  /** Decoded bytes of one file. @default 16 MiB */
  readonly maxFileBytes: number;
  /** Decoded bytes of all files together. @default 48 MiB */
  readonly maxTotalBytes: number;
}

export const defaultApplyLimits: ApplyLimits = {
  maxFiles: 10_000,
  maxFileBytes: 16 * 1024 * 1024,
  maxTotalBytes: 48 * 1024 * 1024,
};

/** Request body limit matching `limits`: base64 grows data by 4/3, plus JSON framing. */
export function maxBodyBytes(limits: ApplyLimits): number {
  return Math.ceil((limits.maxTotalBytes * 4) / 3) + limits.maxFiles * 1024 + 64 * 1024;
}

/** A file the agent should hold. */
export interface DesiredFile {
  readonly path: string;
  /** `sha256:<hex>` of `content`. */
  readonly digest: string;
  readonly content: Buffer;
}

export type ParsedApplyRequest =
  | { readonly ok: true; readonly files: readonly DesiredFile[] }
  | ({ readonly ok: false } & AgentFailure);

const maxPathLength = 512;
const maxDepth = 8;
const segmentPattern = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const digestPattern = /^sha256:[0-9a-f]{64}$/;
const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

/** `sha256:<hex>` of some bytes. */
export function digestOf(content: Uint8Array): string {
  return `sha256:${createHash('sha256').update(content).digest('hex')}`;
}

/** A refusal, thrown within the parse and returned by {@link parseApplyRequest}. */
class Rejected extends Error {
  readonly failure: AgentFailure;
  constructor(reason: AgentReason, field: string, message: string) {
    super(message);
    this.failure = { reason, code: reason, message, field };
  }
}

/** Why a path may not be written, or undefined when it may. */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0 || path.length > maxPathLength) {
    return `must have 1 to ${maxPathLength} characters`;
  }
  if (path.startsWith('/')) return 'must be relative to the base directory, not absolute';
  const segments = path.split('/');
  if (segments.length > maxDepth) return `may have at most ${maxDepth} segments`;
  for (const segment of segments) {
    if (segment === '..') return 'must not contain ".." segments';
    if (segment === '' || segment === '.') return 'must not contain empty or "." segments';
    if (!segmentPattern.test(segment)) {
      return (
        `has the segment "${segment.slice(0, 40)}"; segments start with a letter, digit or "_" ` +
        'and contain only letters, digits, ".", "_" and "-" (at most 128 characters)'
      );
    }
  }
  return undefined;
}

function stringField(record: Record<string, unknown>, key: string, field: string): string {
  const value = record[key];
  if (typeof value !== 'string') {
    throw new Rejected(
      agentReasons.RequestInvalid,
      `${field}.${key}`,
      `${field}.${key} must be a string.`,
    );
  }
  return value;
}

function parseFile(value: unknown, field: string, limits: ApplyLimits): DesiredFile {
  if (!isRecord(value)) {
    throw new Rejected(
      agentReasons.RequestInvalid,
      field,
      `${field} must be an object with path, digest and content.`,
    );
  }
  const path = stringField(value, 'path', field);
  const problem = pathProblem(path);
  if (problem !== undefined) {
    throw new Rejected(
      agentReasons.PathInvalid,
      `${field}.path`,
      `${field}.path "${path.slice(0, 80)}" ${problem}.`,
    );
  }
  const digest = stringField(value, 'digest', field);
  if (!digestPattern.test(digest)) {
    throw new Rejected(
      agentReasons.RequestInvalid,
      `${field}.digest`,
      `${field}.digest must be "sha256:" followed by 64 lower-case hex digits.`,
    );
  }
  const encoded = stringField(value, 'content', field);
  if (encoded.length % 4 !== 0 || !base64Pattern.test(encoded)) {
    throw new Rejected(
      agentReasons.RequestInvalid,
      `${field}.content`,
      `${field}.content must be base64 without line breaks.`,
    );
  }
  if ((encoded.length / 4) * 3 - 2 > limits.maxFileBytes) {
    throw new Rejected(
      agentReasons.TooLarge,
      `${field}.content`,
      `${field} (${path}) is larger than ${limits.maxFileBytes} bytes; split it or raise the limit.`,
    );
  }
  const content = Buffer.from(encoded, 'base64');
  if (content.byteLength > limits.maxFileBytes) {
    throw new Rejected(
      agentReasons.TooLarge,
      `${field}.content`,
      `${field} (${path}) is larger than ${limits.maxFileBytes} bytes; split it or raise the limit.`,
    );
  }
  const actual = digestOf(content);
  if (actual !== digest) {
    throw new Rejected(
      agentReasons.DigestMismatch,
      `${field}.digest`,
      `${field} (${path}) has the digest ${actual}, not ${digest}; the content was altered or the digest computed over other bytes.`,
    );
  }
  return { path, digest, content };
}

function checkSet(files: readonly DesiredFile[]): void {
  const paths = new Set(files.map((file) => file.path));
  files.forEach((file, index) => {
    const first = files.findIndex((other) => other.path === file.path);
    if (first !== index) {
      throw new Rejected(
        agentReasons.PathInvalid,
        `files[${index}].path`,
        `files[${index}].path "${file.path}" repeats files[${first}].path.`,
      );
    }
    const segments = file.path.split('/');
    for (let depth = 1; depth < segments.length; depth += 1) {
      const parent = segments.slice(0, depth).join('/');
      if (paths.has(parent)) {
        throw new Rejected(
          agentReasons.PathInvalid,
          `files[${index}].path`,
          `files[${index}].path "${file.path}" lies under "${parent}", which is also a file.`,
        );
      }
    }
  });
  if (!paths.has(configFileName)) {
    throw new Rejected(
      agentReasons.RequestInvalid,
      'files',
      `files must include ${configFileName}.`,
    );
  }
}

/** Validates a decoded JSON body; never throws. */
export function parseApplyRequest(body: unknown, limits: ApplyLimits): ParsedApplyRequest {
  try {
    if (!isRecord(body) || !Array.isArray(body.files)) {
      throw new Rejected(
        agentReasons.RequestInvalid,
        'files',
        'The body must be a JSON object with a "files" array.',
      );
    }
    const entries: readonly unknown[] = body.files;
    if (entries.length > limits.maxFiles) {
      throw new Rejected(
        agentReasons.TooLarge,
        'files',
        `files has ${entries.length} entries, more than the ${limits.maxFiles} allowed.`,
      );
    }
    let total = 0;
    const files = entries.map((entry, index) => {
      const file = parseFile(entry, `files[${index}]`, limits);
      total += file.content.byteLength;
      if (total > limits.maxTotalBytes) {
        throw new Rejected(
          agentReasons.TooLarge,
          'files',
          `The files add up to more than ${limits.maxTotalBytes} bytes.`,
        );
      }
      return file;
    });
    checkSet(files);
    return { ok: true, files };
  } catch (error) {
    if (!(error instanceof Rejected)) throw error;
    return { ok: false, ...error.failure };
  }
}
