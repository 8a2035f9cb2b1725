/**
 * Reason codes of the agent's answers. Each error answer is
 * `{ "error": { "code", "reason", "message", "field"?, "haproxyMessage"? } }` with the HTTP
 * status noted here; `message` says what went wrong and what to do.
 */
import type { Problem } from '../problem.ts';
import type { ErrorResponseBody } from './api-types.ts';

export const agentReasons = {
  /** 400: the body is not a valid apply request; `field` names the offending field. */
  RequestInvalid: 'RequestInvalid',
  /** 400: a file path is absolute, contains `..`, or is otherwise not allowed. */
  PathInvalid: 'PathInvalid',
  /** 400: a file's content does not match its digest. */
  DigestMismatch: 'DigestMismatch',
  /** 413: the body, a file, or the number of files exceeds its limit. */
  TooLarge: 'TooLarge',
  /** 415: the body is not JSON. */
  UnsupportedMediaType: 'UnsupportedMediaType',
  /** 422: haproxy.cfg contains a directive the agent never loads (code loading, programs). */
  ConfigForbidden: 'ConfigForbidden',
  /** 422: HAProxy rejected the configuration; HAProxy keeps serving the previous one. */
  ConfigRejected: 'ConfigRejected',
  /** 503: HAProxy's master socket is unreachable, or the reload did not finish in time. */
  HAProxyUnavailable: 'HAProxyUnavailable',
  /** 503: the Pod's check sandbox (config-check) did not check the configuration; nothing changed. */
  CheckUnavailable: 'CheckUnavailable',
  /** 500: a rejected configuration could not be rolled back; HAProxy's old workers still serve. */
  RollbackFailed: 'RollbackFailed',
  /** 503: the agent's own TLS identity or trust is missing or invalid. */
  TlsMaterialInvalid: 'TlsMaterialInvalid',
  /** 401: no client certificate, or no or wrong Basic credentials in legacy mode. */
  Unauthenticated: 'Unauthenticated',
  /** 403: the client certificate does not authorise management operations. */
  Forbidden: 'Forbidden',
  /** 400: Basic authentication sent to an agent in TLS mode, which never accepts it. */
  BasicAuthNotAccepted: 'BasicAuthNotAccepted',
  /** 404 / 405: no such endpoint or method. */
  NotFound: 'NotFound',
  /**
   * 409: a runtime change names a base that is not the set the agent holds; nothing changed.
   * Send the complete set with `POST /v1/apply`.
   */
  RuntimeBaseMismatch: 'RuntimeBaseMismatch',
  /** 409: the runtime change does not give the set its result digest names; nothing changed. */
  RuntimeResultMismatch: 'RuntimeResultMismatch',
  /** 409: the change is not server slots the runtime API can set; nothing changed. */
  RuntimeNotExpressible: 'RuntimeNotExpressible',
  /** 500: an unexpected error; the agent log has details. */
  Internal: 'Internal',
} as const;

export type AgentReason = (typeof agentReasons)[keyof typeof agentReasons];

/** HTTP status of each reason. */
export const reasonStatus: Readonly<Record<AgentReason, number>> = {
  RequestInvalid: 400,
  PathInvalid: 400,
  DigestMismatch: 400,
  TooLarge: 413,
  UnsupportedMediaType: 415,
  ConfigForbidden: 422,
  ConfigRejected: 422,
  HAProxyUnavailable: 503,
  CheckUnavailable: 503,
  RollbackFailed: 500,
  TlsMaterialInvalid: 503,
  Unauthenticated: 401,
  Forbidden: 403,
  BasicAuthNotAccepted: 400,
  NotFound: 404,
  RuntimeBaseMismatch: 409,
  RuntimeResultMismatch: 409,
  RuntimeNotExpressible: 409,
  Internal: 500,
};

/** An error answer before it is sent. */
export interface AgentFailure extends Problem<AgentReason> {
  /** A finer code: a TLS or chain reason, or the reason again. */
  readonly code: string;
  readonly field?: string;
  /** HAProxy's own output, for ConfigRejected. */
  readonly haproxyMessage?: string;
}

/** The body of an error answer (`field` and `haproxyMessage` only when present). */
export function errorBodyOf(failure: AgentFailure): ErrorResponseBody {
  return {
    error: {
      reason: failure.reason,
      code: failure.code,
      message: failure.message,
      ...(failure.field === undefined ? {} : { field: failure.field }),
      ...(failure.haproxyMessage === undefined ? {} : { haproxyMessage: failure.haproxyMessage }),
    },
  };
}
