/**
 * The agent's management API, shared by the agent and the controller's client. JSON over
 * HTTPS with mutual TLS (or, in legacy mode, HTTP with Basic authentication).
 *
 * - `POST /v1/apply` with an {@link ApplyRequestBody}: the complete set of files HAProxy
 *   should run with (haproxy.cfg, maps, certificates, other files). Files the agent wrote
 *   before and that are missing from the set are removed. Answers {@link ApplyResponseBody}.
 * - `POST /v1/runtime-change` with a {@link RuntimeChangeRequestBody}: only the server slots
 *   that change, with the digest of the set they apply to and of the set they give
 *   (file-set-digest.ts). The agent rewrites its haproxy.cfg with them, checks the result's
 *   digest and applies it as a runtime change of `POST /v1/apply` (same lint, files, runtime
 *   commands, read-back, reload fallback and state); when its set is not the base, the
 *   result differs or the change needs a reload, it refuses with 409 and changes nothing, and
 *   the caller sends the complete set. Answers {@link ApplyResponseBody}.
 * - `GET /v1/state`: {@link AgentStateBody}.
 * - Errors: {@link ErrorResponseBody}, status by reason (see `reasons.ts`).
 */

import type { Problem } from '../problem.ts';
import type { TlsReport } from './tls-report.ts';

export const agentPaths = {
  apply: '/v1/apply',
  runtimeChange: '/v1/runtime-change',
  state: '/v1/state',
  /** Local socket only. */
  health: '/healthz',
} as const;

/** The main configuration file; applied last, required in every set. */
export const configFileName = 'haproxy.cfg';

export interface ApplyRequestFile {
  /** Relative to the agent's base directory: no leading `/`, no `.` or `..` segments. */
  readonly path: string;
  /** `sha256:` and the lower-case hex SHA-256 of the decoded content. */
  readonly digest: string;
  /** The content, base64-encoded. */
  readonly content: string;
}

export interface ApplyRequestBody {
  readonly files: readonly ApplyRequestFile[];
}

/** Proxy and server names put into runtime commands: HAProxy's identifier characters. */
export const runtimeNamePattern = /^[A-Za-z0-9_.:-]{1,200}$/;

/** A server slot as the changed set declares it (haproxy/runtime-changes.ts `ServerChange`). */
export interface RuntimeChangeBody {
  readonly backend: string;
  readonly server: string;
  /** An IPv4 or IPv6 literal, no brackets. */
  readonly address: string;
  readonly port: number;
  /** `maint` for an emptied slot (written `disabled`), `ready` otherwise. */
  readonly state: 'ready' | 'maint';
}

export interface RuntimeChangeRequestBody {
  /** Digest of the set the agent must hold now (file-set-digest.ts). */
  readonly baseDigest: string;
  /** Digest of the set after the change. */
  readonly resultDigest: string;
  readonly changes: readonly RuntimeChangeBody[];
}

export interface ApplyResponseBody {
  /** False when the set equals what HAProxy already runs: nothing was written or reloaded. */
  readonly changed: boolean;
  /** True when HAProxy reloaded; false for no change or a change made through its runtime API. */
  readonly reloaded: boolean;
  /**
   * Server slots changed through HAProxy's runtime API without a reload (runtime-changes.ts);
   * absent or 0 otherwise.
   */
  readonly runtimeChanges?: number;
  /** Counts applied changes since the state file was created. */
  readonly generation: number;
  /** Digest of haproxy.cfg now in force. */
  readonly configDigest: string;
  readonly durationMs: number;
  /** PID of the HAProxy worker running the configuration, after a reload. */
  readonly workerPid?: number;
}

export interface ErrorResponseBody {
  readonly error: Problem & {
    readonly code: string;
    readonly field?: string;
    readonly haproxyMessage?: string;
  };
}

export interface AppliedFileBody {
  readonly path: string;
  readonly digest: string;
  readonly size: number;
}

export interface HAProxyProcessBody {
  readonly pid: number;
  readonly reloads: number;
  readonly uptime: string;
  readonly version: string;
}

export interface AgentStateBody {
  readonly generation: number;
  readonly configDigest: string | null;
  readonly appliedAt: string | null;
  readonly files: readonly AppliedFileBody[];
  readonly haproxy:
    | {
        readonly reachable: true;
        readonly master: HAProxyProcessBody & { readonly failedReloads: number };
        readonly workers: readonly HAProxyProcessBody[];
        readonly oldWorkers: readonly HAProxyProcessBody[];
      }
    | { readonly reachable: false; readonly error: string };
  readonly tls: TlsStateBody;
}

export type TlsStateBody = { readonly mode: 'legacy-basic-auth' } | MutualTlsStateBody;

/** The agent's mTLS material; when it may not be used now, why (`reason`, `message`). */
type MutualTlsStateBody = {
  readonly mode: 'mtls';
  readonly dir: string;
  readonly revision: string | null;
  readonly loadedAt: string;
  /** Fingerprints (SHA-256) of ca.crt. */
  readonly caFingerprints: readonly string[];
  /** Fingerprints of previous-ca.crt while it is trusted. */
  readonly previousCaFingerprints: readonly string[];
  readonly previousCaUntil: string | null;
  readonly identity: {
    readonly subject: string;
    readonly dnsNames: readonly string[];
    readonly notAfter: string;
    readonly fingerprint: string;
  } | null;
  readonly clientName: string;
  /** Reads of the directory, failed reads, and changes taken, since the agent started. */
  readonly reads: number;
  readonly readErrors: number;
  readonly changes: number;
  /** What is loaded for the mTLS link, in the form the controller records (`tls-report.ts`). */
  readonly loaded: TlsReport;
} & ({ readonly valid: true } | ({ readonly valid: false } & Problem));
