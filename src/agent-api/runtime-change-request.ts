/**
 * Parsing a runtime-change request (hostile input): two set digests and at most
 * `maxRuntimeChanges` server slots, each a proxy and server name HAProxy's runtime API takes,
 * an IP literal, a port and a state. Errors name the field and say what to fix. Whether the
 * change fits the agent's files is the apply service's decision, not the parser's.
 */
import { isIP } from 'node:net';
import { type RuntimeChangeBody, runtimeNamePattern } from './api-types.ts';
import { type AgentFailure, agentReasons } from './reasons.ts';
import { isRecord } from '../is-record.ts';

/** Slots one runtime change may set. @default 10,000 */
export const maxRuntimeChanges = 10_000;

/** Request body limit: `maxRuntimeChanges` slots of at most 512 bytes each, and the digests. */
export const maxRuntimeChangeBodyBytes = maxRuntimeChanges * 512 + 4 * 1024;

export interface RuntimeChangeRequest {
  readonly baseDigest: string;
  readonly resultDigest: string;
  readonly changes: readonly RuntimeChangeBody[];
}

export type ParsedRuntimeChange =
  ({ readonly ok: true } & RuntimeChangeRequest) | ({ readonly ok: false } & AgentFailure);

const digestPattern = /^sha256:[0-9a-f]{64}$/;

function invalid(field: string, message: string): ParsedRuntimeChange {
  return {
    ok: false,
    reason: agentReasons.RequestInvalid,
    code: agentReasons.RequestInvalid,
    field,
    message,
  };
}

/** The change at `field`, or the sentence saying what is wrong with it. */
function parseChange(value: unknown, field: string): RuntimeChangeBody | ParsedRuntimeChange {
  if (!isRecord(value)) {
    return invalid(
      field,
      `${field} must be an object with backend, server, address, port and state.`,
    );
  }
  const { backend, server, address, port, state } = value;
  for (const [key, name] of [
    ['backend', backend],
    ['server', server],
  ] as const) {
    if (typeof name !== 'string' || !runtimeNamePattern.test(name)) {
      return invalid(
        `${field}.${key}`,
        `${field}.${key} must be a ${key} name of 1 to 200 letters, digits, ".", "_", ":" or "-".`,
      );
    }
  }
  if (typeof address !== 'string' || isIP(address) === 0) {
    return invalid(
      `${field}.address`,
      `${field}.address must be an IPv4 or IPv6 literal without brackets (a slot's endpoint, not a host name).`,
    );
  }
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    return invalid(`${field}.port`, `${field}.port must be an integer from 1 to 65535.`);
  }
  if (state !== 'ready' && state !== 'maint') {
    return invalid(
      `${field}.state`,
      `${field}.state must be "ready" (a filled slot) or "maint" (an emptied, disabled slot).`,
    );
  }
  return { backend: String(backend), server: String(server), address, port, state };
}

/** Validates a decoded JSON body; never throws. */
export function parseRuntimeChangeRequest(body: unknown): ParsedRuntimeChange {
  if (!isRecord(body)) {
    return invalid(
      'changes',
      'The body must be a JSON object with baseDigest, resultDigest and a "changes" array.',
    );
  }
  for (const key of ['baseDigest', 'resultDigest'] as const) {
    const digest = body[key];
    if (typeof digest !== 'string' || !digestPattern.test(digest)) {
      return invalid(key, `${key} must be "sha256:" followed by 64 lower-case hex digits.`);
    }
  }
  const entries = body.changes;
  if (!Array.isArray(entries) || entries.length === 0) {
    return invalid('changes', 'changes must be an array of at least one server slot.');
  }
  if (entries.length > maxRuntimeChanges) {
    return {
      ok: false,
      reason: agentReasons.TooLarge,
      code: agentReasons.TooLarge,
      field: 'changes',
      message: `changes has ${entries.length} entries, more than the ${maxRuntimeChanges} allowed; send the complete set with POST /v1/apply.`,
    };
  }
  const changes: RuntimeChangeBody[] = [];
  const seen = new Map<string, number>();
  for (const [index, entry] of (entries as readonly unknown[]).entries()) {
    const field = `changes[${index}]`;
    const change = parseChange(entry, field);
    if ('ok' in change) return change;
    const target = `${change.backend}/${change.server}`;
    const first = seen.get(target);
    if (first !== undefined) {
      return invalid(
        field,
        `${field} sets ${target} again, as changes[${first}] does; send each slot once.`,
      );
    }
    seen.set(target, index);
    changes.push(change);
  }
  return {
    ok: true,
    baseDigest: String(body.baseDigest),
    resultDigest: String(body.resultDigest),
    changes,
  };
}
