/** The agent's settings, as `haptic agent` flags and environment give them. */
import type { ApplyLimits } from '../agent-api/apply-request.ts';
import type { ListenAddress } from '../net/listen-address.ts';

export type AgentTransport =
  | {
      readonly mode: 'mtls';
      /** Mounted agent identity Secret (`--tls-dir`). @default /etc/haptic/agent-tls */
      readonly tlsDir: string;
      /** DNS SAN the controller's certificate must carry (`--tls-client-name`). */
      readonly clientName: string;
      /** Fallback polling of `tlsDir`. @default 10 seconds */
      readonly pollIntervalMs?: number;
    }
  | {
      /** `--legacy-basic-auth`: plain HTTP with DATAPLANE_USERNAME / DATAPLANE_PASSWORD. */
      readonly mode: 'legacy-basic-auth';
      readonly username: string;
      readonly password: string;
    };

export interface AgentOptions {
  /** `--listen`. @default :5555 */
  readonly listen: ListenAddress;
  readonly transport: AgentTransport;
  /** Where HAProxy reads its files (`--base-dir`). @default /etc/haproxy/haptic */
  readonly baseDir: string;
  /** HAProxy's master socket (`--master-socket`). @default /var/run/haproxy/master.sock */
  readonly masterSocket: string;
  /** Health and state socket (`--local-socket`). @default /var/run/haptic/agent.sock */
  readonly localSocket: string;
  /** Last applied state (`--state-file`). @default /var/lib/haptic/state.json */
  readonly stateFile: string;
  /**
   * The check sandbox's socket (`--check-socket`), for `haproxy -c` messages of rejected
   * configurations. @default /run/haptic-check/check.sock
   */
  readonly checkSocket: string;
  /** Longest wait for a reload (`--reload-timeout`). @default 60 seconds */
  readonly reloadTimeoutMs: number;
  readonly limits: ApplyLimits;
  /** How long in-flight requests may finish at shutdown. @default 30 seconds */
  readonly shutdownGraceMs: number;
}
