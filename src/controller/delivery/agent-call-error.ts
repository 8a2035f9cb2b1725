/**
 * Why a call to an agent failed, classified so the fan-out knows whether another attempt can
 * help. Built from Node's transport and TLS errors and from the agent's error answers.
 */
import type { ErrorResponseBody } from '../../agent-api/api-types.ts';
import { describeError, errorCode } from '../../errors.ts';
import type { Problem } from '../../problem.ts';
import { AgentCertificateRejected } from './agent-connection-pool.ts';

/**
 * Why a call failed: `reason` is the own material's reason (local-material), Node's error code
 * or `ConnectionFailed` (connect), the product's chain reason or `HandshakeFailed` (tls), the
 * agent's reason (http), or `Timeout`, `Withdrawn`, `UnexpectedAnswer`.
 */
export interface AgentCallError extends Problem {
  /**
   * - `local-material`: the controller's own identity or trust is invalid; nothing was sent.
   * - `connect`: the agent could not be reached or dropped the connection.
   * - `tls`: the agent's certificate was rejected, or the handshake failed.
   * - `timeout`: no answer within the deadline.
   * - `withdrawn`: the caller gave the call up (its signal), for example because the agent's Pod
   *   is gone; not a failure of the agent.
   * - `http`: the agent answered with an error (`reason` is the agent's reason).
   * - `protocol`: the answer was not what the API promises.
   */
  readonly kind:
    'local-material' | 'connect' | 'tls' | 'timeout' | 'withdrawn' | 'http' | 'protocol';
  readonly status?: number;
  readonly haproxyMessage?: string;
  /** Whether a later attempt may succeed (transient transport failures, 5xx except rejections). */
  readonly retryable: boolean;
}

/** OpenSSL's verification codes, as the product's chain reasons. */
const opensslReasons: Readonly<Record<string, string>> = {
  CERT_HAS_EXPIRED: 'Expired',
  CERT_NOT_YET_VALID: 'NotYetValid',
  INVALID_PURPOSE: 'WrongPurpose',
  ERR_TLS_CERT_ALTNAME_INVALID: 'NameMismatch',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'UnknownAuthority',
  UNABLE_TO_GET_ISSUER_CERT: 'UnknownAuthority',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'UnknownAuthority',
  SELF_SIGNED_CERT_IN_CHAIN: 'UnknownAuthority',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'UnknownAuthority',
  CERT_SIGNATURE_FAILURE: 'UnknownAuthority',
  CERT_UNTRUSTED: 'UnknownAuthority',
};

const transientCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
]);

/** Why a request ended early: its deadline passed, or its caller withdrew it. */
export type RequestEnd = 'timed-out' | 'withdrawn' | undefined;

/** The caller gave up its call to `agent` before an answer came (see the kind `withdrawn`). */
export function withdrawnError(agent: string): AgentCallError {
  return {
    kind: 'withdrawn',
    reason: 'Withdrawn',
    message: `The call to agent ${agent} was withdrawn before it was answered.`,
    retryable: false,
  };
}

/** Classifies an error thrown by a request to `agent` (named in messages). */
export function transportError(error: unknown, agent: string, ended: RequestEnd): AgentCallError {
  if (ended === 'withdrawn') return withdrawnError(agent);
  if (ended === 'timed-out') {
    return {
      kind: 'timeout',
      reason: 'Timeout',
      message: `Agent ${agent} did not answer in time.`,
      retryable: true,
    };
  }
  if (error instanceof AgentCertificateRejected) {
    return {
      kind: 'tls',
      reason: error.reason,
      message: `Agent ${agent} is not trusted: ${error.message}`,
      retryable: false,
    };
  }
  const code = errorCode(error) ?? '';
  const verification = opensslReasons[code];
  if (verification !== undefined) {
    return {
      kind: 'tls',
      reason: verification,
      message: `Agent ${agent} is not trusted: its certificate fails verification against ca.crt (${describeError(error)}, ${code}).`,
      retryable: false,
    };
  }
  if (
    code.startsWith('ERR_SSL_') ||
    code.startsWith('ERR_TLS_') ||
    /ssl|tls/i.test(describeError(error))
  ) {
    return {
      kind: 'tls',
      reason: 'HandshakeFailed',
      message: `The TLS handshake with agent ${agent} failed (${describeError(error)}); is it serving mTLS on this port?`,
      retryable: false,
    };
  }
  return {
    kind: 'connect',
    reason: code === '' ? 'ConnectionFailed' : code,
    message: `Agent ${agent} cannot be reached: ${describeError(error)}.`,
    retryable: transientCodes.has(code) || describeError(error) === 'socket hang up',
  };
}

function isErrorBody(value: unknown): value is ErrorResponseBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error: unknown = value.error;
  return (
    typeof error === 'object' &&
    error !== null &&
    'reason' in error &&
    'message' in error &&
    typeof error.reason === 'string' &&
    typeof error.message === 'string'
  );
}

/** Agent reasons worth another attempt: the agent may recover (HAProxy back, material repaired). */
const retryableReasons = new Set(['HAProxyUnavailable', 'TlsMaterialInvalid', 'Internal']);

/** Classifies an error answer of `agent`. */
export function answerError(status: number, body: unknown, agent: string): AgentCallError {
  if (isErrorBody(body)) {
    const { reason, message, haproxyMessage } = body.error;
    return {
      kind: 'http',
      reason,
      status,
      message: `Agent ${agent} answered ${status} ${reason}: ${message}`,
      ...(typeof haproxyMessage === 'string' ? { haproxyMessage } : {}),
      retryable: retryableReasons.has(reason) || status === 502 || status === 504,
    };
  }
  return {
    kind: 'protocol',
    reason: 'UnexpectedAnswer',
    status,
    message: `Agent ${agent} answered ${status} without an agent error body; is this port an agent's?`,
    retryable: status >= 500,
  };
}
