/**
 * Turning Kubernetes API failures into one-line HapticErrors: the HTTP status, the API
 * server's own message (from its Status body) and what was being done.
 */
import { ApiException } from '@kubernetes/client-node';
import { type HapticError, describeError } from '../errors.ts';
import { describeStatus, kubeStatusError, kubeUnreachableError } from './status-error.ts';

/** The HTTP status of a failed API call, or undefined for a failure without an answer. */
export function apiStatus(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** What the API server said about a failed call, in one clause. */
export function describeApiError(error: unknown): string {
  if (error instanceof ApiException) return describeStatus(error.code, bodyText(error.body));
  return describeError(error);
}

/**
 * The HapticError for a failed call: `KUBE_FORBIDDEN` for 401/403, `KUBE_REQUEST_FAILED`
 * otherwise. `action` says what was attempted, for example `read Secret haptic/haptic-agent-ca`.
 */
export function kubeRequestError(action: string, error: unknown): HapticError {
  return error instanceof ApiException
    ? kubeStatusError(action, error.code, bodyText(error.body), error)
    : kubeUnreachableError(action, error);
}

/** The client keeps the answer's body as text; anything else carries no message. */
const bodyText = (body: unknown): string => (typeof body === 'string' ? body : '');
