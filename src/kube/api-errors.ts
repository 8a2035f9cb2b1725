/**
 * Turning Kubernetes API failures into one-line HapticErrors: the HTTP status, the API
 * server's own message (from its Status body) and what was being done.
 */
import { ApiException } from '@kubernetes/client-node';
import { HapticError, describeError, errorCodes } from '../errors.ts';

/** The HTTP status of a failed API call, or undefined for a failure without an answer. */
export function apiStatus(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** The `message` of the API server's Status body, when there is one. */
function statusMessage(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
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
export function describeApiError(error: unknown): string {
  if (error instanceof ApiException) {
    const message = statusMessage(error.body);
    return message === undefined ? `HTTP ${error.code}` : `HTTP ${error.code}: ${message}`;
  }
  return describeError(error);
}

/**
 * The HapticError for a failed call: `KUBE_FORBIDDEN` for 401/403, `KUBE_REQUEST_FAILED`
 * otherwise. `action` says what was attempted, for example `read Secret haptic/haptic-agent-ca`.
 */
export function kubeRequestError(action: string, error: unknown): HapticError {
  const status = apiStatus(error);
  if (status === 401 || status === 403) {
    return new HapticError(
      errorCodes.KUBE_FORBIDDEN,
      `The Kubernetes API refused to ${action} (${describeApiError(error)}); grant this ServiceAccount the permission or use other credentials.`,
      { cause: error },
    );
  }
  return new HapticError(
    errorCodes.KUBE_REQUEST_FAILED,
    `Could not ${action}: ${describeApiError(error)}.`,
    { cause: error },
  );
}
