/**
 * Whether a runtime change (`POST /v1/runtime-change`) fits the set this agent holds: its
 * base is the held set, its slots are server lines of the applied haproxy.cfg, the rewritten
 * set is the one its result digest names, and the two sets differ in server slots alone
 * (runtime-changes.ts). A change that does not fit is refused with nothing changed (409), and
 * the caller sends the complete set. Pure: the held set and the applied text come in.
 */
import { configFileName } from '../agent-api/api-types.ts';
import { type DesiredFile, digestOf } from '../agent-api/apply-request.ts';
import { fileSetDigest } from '../agent-api/file-set-digest.ts';
import { agentReasons } from '../agent-api/reasons.ts';
import type { RuntimeChangeRequest } from '../agent-api/runtime-change-request.ts';
import { type RuntimePlan, rewrittenPlan } from '../haproxy/runtime-changes.ts';
import { rewriteServerSlots } from '../haproxy/slot-rewrite.ts';
import type { Problem } from '../problem.ts';
import type { AppliedFile } from './file-plan.ts';
import type { AppliedState } from './state-file.ts';

type RefusalReason =
  | typeof agentReasons.RuntimeBaseMismatch
  | typeof agentReasons.RuntimeResultMismatch
  | typeof agentReasons.RuntimeNotExpressible;

/** A runtime change refused with nothing changed: the field at fault and the sentence. */
export interface RuntimeChangeRefusal extends Problem<RefusalReason> {
  readonly field: string;
}

export type RuntimeChangeFit =
  | ({ readonly ok: false } & RuntimeChangeRefusal)
  | {
      readonly ok: true;
      /** haproxy.cfg with the request's slots rewritten. */
      readonly written: DesiredFile;
      /** The held set with `written` in place of haproxy.cfg. */
      readonly files: readonly AppliedFile[];
      readonly plan: Extract<RuntimePlan, { runtime: true }>;
    };

function refused(reason: RefusalReason, field: string, message: string): RuntimeChangeFit {
  return { ok: false, reason, field, message: `${message} Nothing was changed.` };
}

/** The refusal of a request whose base is not the set `state` holds, if it is not. */
export function baseRefusal(
  request: RuntimeChangeRequest,
  state: AppliedState,
): RuntimeChangeFit | undefined {
  const base = fileSetDigest(state.files);
  const applied = state.files.find((file) => file.path === configFileName);
  if (base === request.baseDigest && applied !== undefined) return undefined;
  return refused(
    agentReasons.RuntimeBaseMismatch,
    'baseDigest',
    `baseDigest ${request.baseDigest} is not the set this agent holds (${applied === undefined ? 'none' : base}, generation ${state.generation}); send the complete set with POST /v1/apply.`,
  );
}

/**
 * The request applied to the held files, whose applied haproxy.cfg reads `text` (undefined
 * when the file on disk is not the applied one).
 */
export function fitRuntimeChange(
  request: RuntimeChangeRequest,
  held: readonly AppliedFile[],
  text: string | undefined,
): RuntimeChangeFit {
  if (text === undefined) {
    return refused(
      agentReasons.RuntimeBaseMismatch,
      'baseDigest',
      `${configFileName} on disk is not the applied one (changed outside the agent); send the complete set with POST /v1/apply.`,
    );
  }
  const rewritten = rewriteServerSlots(text, request.changes);
  if (rewritten === undefined) {
    return refused(
      agentReasons.RuntimeNotExpressible,
      'changes',
      `changes name a server that is not one server line of a backend or listen section of ${configFileName}; send the complete set with POST /v1/apply.`,
    );
  }
  const content = Buffer.from(rewritten.config);
  const written: DesiredFile = { path: configFileName, digest: digestOf(content), content };
  const files = held.map((file) =>
    file.path === configFileName
      ? { path: file.path, digest: written.digest, size: content.byteLength }
      : file,
  );
  const result = fileSetDigest(files);
  if (result !== request.resultDigest) {
    return refused(
      agentReasons.RuntimeResultMismatch,
      'resultDigest',
      `changes applied to this agent's files give the set ${result}, not resultDigest ${request.resultDigest}; send the complete set with POST /v1/apply.`,
    );
  }
  const plan = rewrittenPlan(held, files, rewritten);
  if (!plan.runtime) {
    return refused(
      agentReasons.RuntimeNotExpressible,
      'changes',
      `changes need a reload (${plan.reason}); send the complete set with POST /v1/apply.`,
    );
  }
  return { ok: true, written, files, plan };
}
