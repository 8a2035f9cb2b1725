/**
 * One error type for the whole product, with codes grouped by subsystem. Messages are full
 * sentences that say what went wrong and how to fix it; the code lets callers branch.
 */
export const errorCodes = {
  /** A command-line flag or environment variable is missing or malformed. */
  USAGE_INVALID: 'HAPTIC_USAGE_INVALID',
  /** A local tool (helm, kube-apiserver, etcd, haproxy) is missing or failed. */
  TOOL_FAILED: 'HAPTIC_TOOL_FAILED',
  /** The local control plane did not start or stop as expected. */
  CLUSTER_FAILED: 'HAPTIC_CLUSTER_FAILED',
  /** A Kubernetes API call failed for a reason other than a rule violation. */
  KUBE_REQUEST_FAILED: 'HAPTIC_KUBE_REQUEST_FAILED',
  /** The package or chart metadata is unreadable. */
  METADATA_INVALID: 'HAPTIC_METADATA_INVALID',
  /** PEM or DER certificate data cannot be decoded (wrong block type, bad base64, bad ASN.1). */
  PKI_CERTIFICATE_INVALID: 'HAPTIC_PKI_CERTIFICATE_INVALID',
  /** A private key cannot be decoded, or uses an algorithm the product cannot sign with. */
  PKI_KEY_INVALID: 'HAPTIC_PKI_KEY_INVALID',
  /** A certificate cannot be issued with the given parameters (expired issuer, empty validity). */
  PKI_ISSUE_INVALID: 'HAPTIC_PKI_ISSUE_INVALID',
  /** helm rejected the release's values: values.schema.json, a chart rule, or unparseable YAML. */
  RENDER_VALUES_INVALID: 'HAPTIC_RENDER_VALUES_INVALID',
  /** helm could not render the chart for another reason (missing chart, template defect). */
  RENDER_FAILED: 'HAPTIC_RENDER_FAILED',
  /** helm's output is not a stream of Kubernetes objects. */
  RENDER_OUTPUT_INVALID: 'HAPTIC_RENDER_OUTPUT_INVALID',
  /** No Kubernetes client configuration: no --kubeconfig, KUBECONFIG, ~/.kube/config or Pod token. */
  KUBE_CONFIG_MISSING: 'HAPTIC_KUBE_CONFIG_MISSING',
  /** A write lost a race: the object changed since it was read, or was created meanwhile. */
  KUBE_CONFLICT: 'HAPTIC_KUBE_CONFLICT',
  /** The API server denied a request (RBAC); the message names the verb and the object. */
  KUBE_FORBIDDEN: 'HAPTIC_KUBE_FORBIDDEN',
  /** The certificate renewal refuses to act until an operator repairs the state it names. */
  CERTS_REFUSED: 'HAPTIC_CERTS_REFUSED',
  /** The certificate renewal did not reach a state with nothing to do (a defect). */
  CERTS_NOT_CONVERGED: 'HAPTIC_CERTS_NOT_CONVERGED',
  /** The webhook's serving certificate directory lacks a usable tls.crt/tls.key pair. */
  WEBHOOK_CERTIFICATE_INVALID: 'HAPTIC_WEBHOOK_CERTIFICATE_INVALID',
  /** The webhook could not listen on its address (port in use, bad address). */
  WEBHOOK_LISTEN_FAILED: 'HAPTIC_WEBHOOK_LISTEN_FAILED',
  /** Mounted TLS identity or trust (tls.crt, tls.key, ca.crt, previous-ca.*) is missing or unusable. */
  TLS_MATERIAL_INVALID: 'HAPTIC_TLS_MATERIAL_INVALID',
  /** The agent could not prepare its directories, state file, or sockets. */
  AGENT_START_FAILED: 'HAPTIC_AGENT_START_FAILED',
  /** The agent's HAProxy master socket is unreachable or answered unexpectedly. */
  AGENT_HAPROXY_UNAVAILABLE: 'HAPTIC_AGENT_HAPROXY_UNAVAILABLE',
  /** A call from the controller to an agent failed (transport, TLS, or the agent's answer). */
  AGENT_CALL_FAILED: 'HAPTIC_AGENT_CALL_FAILED',
  /** The check sandbox could not start: socket, work directory, user, haproxy or prlimit. */
  SANDBOX_START_FAILED: 'HAPTIC_SANDBOX_START_FAILED',
  /** A component of a long-running process failed to start and its cause has no code of its own. */
  COMPONENT_START_FAILED: 'HAPTIC_COMPONENT_START_FAILED',
  /** One or more components of a long-running process failed to stop; the message names them. */
  COMPONENT_STOP_FAILED: 'HAPTIC_COMPONENT_STOP_FAILED',
} as const;

export type ErrorCode = (typeof errorCodes)[keyof typeof errorCodes];

export class HapticError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HapticError';
    this.code = code;
  }
}

/** The `code` of a Node error (`ENOENT`, `ERR_SSL_…`), if it has one. */
export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** Message of any thrown value, for logs and one-line CLI output. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
