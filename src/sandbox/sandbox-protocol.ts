/**
 * The check sandbox's protocol: HTTP on a Unix socket, one request per connection.
 *
 * - `POST /v1/check` with the agents' apply request body (`{ files: [{ path, digest,
 *   content }] }`, Content-Type application/json): the complete set of files, under the same
 *   path rules and limits the agents apply (a set the sandbox refuses, the agents refuse too).
 *   Answers 200 with a {@link CheckOutcome}. An entry without `content` names a file the
 *   sandbox holds from the last request it parsed, by its digest (kept-contents.ts); when it
 *   holds none, the answer is 409 with the reason `ContentUnknown` and the client sends the
 *   set again with every content. `?lane=review` queues an admission review's check apart from
 *   delivery's (`?lane=delivery`, the default; check-gate.ts). A check whose connection closes
 *   before its answer is dropped, or killed if it runs.
 * - `GET /healthz`: 200 while the sandbox serves (its startup and liveness probe).
 * - A malformed request: the agents' error body `{ error: { reason, code, message, field? } }`
 *   with the status of its reason (400, 413, 415, 404).
 */
import type { Problem } from '../problem.ts';

export const sandboxPaths = {
  check: '/v1/check',
  health: '/healthz',
} as const;

/** Where the chart's `config-check` container listens: an emptyDir shared with its Pod. */
export const defaultCheckSocket = '/run/haptic-check/check.sock';

export type CheckOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** `rejected`: HAProxy reported errors; `unavailable`: the check could not run. */
      readonly failure: 'rejected' | 'unavailable';
      readonly message: string;
      /**
       * `memory`: HAProxy ran out of its address space (the sandbox's memory limit) while
       * reading the configuration: the configuration is too large, not wrong.
       */
      readonly exhausted?: 'memory';
    };

/** The reason of the 409 answer to an entry whose content the sandbox does not hold. */
export const contentUnknownReason = 'ContentUnknown';

export const contentUnknownStatus = 409;

/** A request that names content the sandbox does not hold. */
export interface ContentUnknown extends Problem<typeof contentUnknownReason> {
  readonly ok: false;
  readonly field: string;
}
