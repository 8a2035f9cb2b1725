/**
 * A failed Kubernetes API call as one HapticError, from the HTTP status and the body the API
 * server answered: `KUBE_FORBIDDEN` for 401/403, `KUBE_REQUEST_FAILED` otherwise, naming what
 * was attempted and the API server's own message (from its Status body). The same sentences as
 * `api-errors.ts` gives for the full client's failures, for requests sent without it.
 */
import { HapticError, describeError, errorCodes } from '../errors.ts';

/** The `message` of the API server's Status body, when there is one. */
export function statusMessage(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null && 'message' in parsed) {
      return typeof parsed.message === 'string' ? parsed.message : undefined;
    }
  } catch {
    return body.trim() === '' ? undefined : body.trim().slice(0, 500);
  }
  return undefined;
}

/** What the API server said about a failed call, in one clause. */
export function describeStatus(status: number, body: string): string {
  const message = statusMessage(body);
  return message === undefined ? `HTTP ${status}` : `HTTP ${status}: ${message}`;
}

/** The HapticError for an answer with `status`; `action` is e.g. `read Secret haptic/haptic-agent-ca`. */
export function kubeStatusError(
  action: string,
  status: number,
  body: string,
  cause?: unknown,
): HapticError {
  const options = cause === undefined ? undefined : { cause };
  if (status === 401 || status === 403) {
    return new HapticError(
      errorCodes.KUBE_FORBIDDEN,
      `The Kubernetes API refused to ${action} (${describeStatus(status, body)}); grant this ServiceAccount the permission or use other credentials.`,
      options,
    );
  }
  return new HapticError(
    errorCodes.KUBE_REQUEST_FAILED,
    `Could not ${action}: ${describeStatus(status, body)}.`,
    options,
  );
}

/** The HapticError for a call that got no answer (refused connection, TLS failure, timeout). */
export function kubeUnreachableError(action: string, error: unknown): HapticError {
  return new HapticError(
    errorCodes.KUBE_REQUEST_FAILED,
    `Could not ${action}: ${describeError(error)}.`,
    { cause: error },
  );
}
