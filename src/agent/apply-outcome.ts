/**
 * What an apply answers (apply-service.ts): the applied set's figures, or the failure with
 * its reason and sentence. Each refusal and failure of an apply is built here, from what the
 * apply found; the service logs and returns it.
 */
import { type ApplyResponseBody, configFileName } from '../agent-api/api-types.ts';
import type { DesiredFile } from '../agent-api/apply-request.ts';
import { type AgentFailure, agentReasons } from '../agent-api/reasons.ts';
import { type FileLintFinding, describeFindings } from '../haproxy/files-lint.ts';
import type { CheckOutcome } from '../sandbox/sandbox-protocol.ts';
import type { AppliedFile } from './file-plan.ts';
import type { PathConflict } from './file-store.ts';
import type { ReloadOutcome } from './haproxy-reload.ts';

export type ApplyOutcome =
  ({ readonly ok: true } & ApplyResponseBody) | ({ readonly ok: false } & AgentFailure);

export function failure(outcome: AgentFailure): ApplyOutcome {
  return { ok: false, ...outcome };
}

/** Milliseconds to a tenth, for the log. */
export function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** The state file's record of `files`. */
export function appliedFiles(files: readonly DesiredFile[]): AppliedFile[] {
  return files.map((file) => ({
    path: file.path,
    digest: file.digest,
    size: file.content.byteLength,
  }));
}

/** The digest of the set's haproxy.cfg ('' when it has none). */
export function configDigestOf(files: readonly { path: string; digest: string }[]): string {
  return files.find((file) => file.path === configFileName)?.digest ?? '';
}

/** The answer for a set HAProxy runs already: nothing written, nothing reloaded. */
export function unchanged(generation: number, configDigest: string, started: number): ApplyOutcome {
  return {
    ok: true,
    changed: false,
    reloaded: false,
    generation,
    configDigest,
    durationMs: performance.now() - started,
  };
}

/** Most paths a conflict answer lists. @default 3 */
const listedPaths = 3;

function listed(paths: readonly string[]): string {
  const more = paths.length - listedPaths;
  return `${paths.slice(0, listedPaths).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** The 400 answer for a write that would change what a path is on disk. */
export function conflictFailure(
  conflict: PathConflict,
  files: readonly DesiredFile[],
): AgentFailure {
  const field = `files[${files.findIndex((file) => file.path === conflict.path)}].path`;
  const what =
    conflict.kind === 'directory'
      ? `${field} "${conflict.path}" is a directory on the agent holding ${listed(conflict.holding)}: a file cannot replace a directory in one apply. ` +
        `Apply the set without the files under ${conflict.path} first (the agent then removes the directory), then this one; or give the file another path.`
      : `${field} "${conflict.path}" lies under "${conflict.file}", which is a file on the agent: a directory cannot replace a file in one apply. ` +
        `Apply the set without ${conflict.file} first, then this one; or give the files another path.`;
  return {
    reason: agentReasons.PathInvalid,
    code: 'PathConflict',
    field,
    message: `${what} Nothing was changed.`,
  };
}

/** The 422 answer for a set the lint refuses. */
export function lintRefusal(findings: readonly FileLintFinding[]): AgentFailure {
  return {
    reason: agentReasons.ConfigForbidden,
    code: agentReasons.ConfigForbidden,
    field: 'files',
    message: `The configuration is refused: ${describeFindings(findings)}`,
  };
}

/** The answer when HAProxy's master socket does not answer before a reload. */
export function unreachableFailure(problem: string): AgentFailure {
  return {
    reason: agentReasons.HAProxyUnavailable,
    code: agentReasons.HAProxyUnavailable,
    message: `${problem} Nothing was changed.`,
  };
}

/** The answer when the sandbox's `haproxy -c` rejects the set or cannot check it. */
export function checkFailure(check: Extract<CheckOutcome, { ok: false }>): AgentFailure {
  const rejected = check.failure === 'rejected';
  const reason = rejected ? agentReasons.ConfigRejected : agentReasons.CheckUnavailable;
  return {
    reason,
    code: reason,
    message: rejected
      ? `haproxy -c rejects the configuration; HAProxy keeps serving the previous one: ${check.message}`
      : `${check.message} Nothing was changed.`,
    ...(rejected ? { haproxyMessage: check.message } : {}),
  };
}

type FailedReload = Extract<ReloadOutcome, { ok: false }>;

/** The sandbox accepted the files before the reload, so a rejection is HAProxy's at run time. */
function runTimeRejection(reload: FailedReload): string | undefined {
  return reload.failure === 'rejected'
    ? 'haproxy -c accepts the configuration, but HAProxy could not start it (for example an address in use or a file it cannot read); see the HAProxy log.'
    : undefined;
}

/** What a failed reload did, in one sentence (the log's and the answer's). */
export function reloadFailureSummary(reload: FailedReload): string {
  return reload.failure === 'rejected'
    ? `HAProxy rejected the configuration and keeps serving the previous one: ${runTimeRejection(reload) ?? reload.message}`
    : reload.message;
}

/** The answer for a failed reload, after the last-known-good set was `restored` (or not). */
export function reloadFailure(reload: FailedReload, restored: ReloadOutcome): AgentFailure {
  const haproxyMessage = runTimeRejection(reload);
  const summary = reloadFailureSummary(reload);
  const detail = haproxyMessage === undefined ? {} : { haproxyMessage };
  if (!restored.ok) {
    return {
      reason: agentReasons.RollbackFailed,
      code: agentReasons.RollbackFailed,
      message: `${summary} Restoring the last-known-good configuration failed too: ${restored.message}`,
      ...detail,
    };
  }
  const reason =
    reload.failure === 'rejected' ? agentReasons.ConfigRejected : agentReasons.HAProxyUnavailable;
  return { reason, code: reason, message: summary, ...detail };
}
