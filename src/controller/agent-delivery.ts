/**
 * Keeps every agent on the desired configuration. `deliver()` applies it to the agents not
 * yet confirmed on it (in parallel, through the agent client's fan-out); `sync()` asks each
 * agent for its state and applies to those whose files differ, so a new or restarted agent,
 * or one that failed earlier, gets the current configuration. One operation at a time.
 */
import type { Logger } from 'pino';
import { type EncodedApply, encodeApply } from '../agent-api/apply-encoding.ts';
import { digestOf } from '../agent-api/apply-request.ts';
import type { AgentClient, AgentEndpoint, BundleFile } from './agent-client.ts';
import type { AgentDiscovery } from './agent-discovery.ts';
import { type AgentApplyResult, type FanOutOptions, applyToAgents } from './agent-fanout.ts';
import type { ControllerMetrics } from './controller-metrics.ts';

export interface DesiredConfig {
  readonly digest: string;
  readonly encoded: EncodedApply;
  /** path → `sha256:` digest, to compare with an agent's reported files. */
  readonly fileDigests: ReadonlyMap<string, string>;
}

export function desiredConfig(files: readonly BundleFile[], digest: string): DesiredConfig {
  return {
    digest,
    encoded: encodeApply(files),
    fileDigests: new Map(files.map((file) => [file.path, digestOf(file.content)])),
  };
}

export interface AgentDeliveryOptions {
  readonly client: AgentClient;
  readonly discovery: AgentDiscovery;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
  readonly fanOut?: FanOutOptions;
  /** Told of every agent's state answer, failure and successful exchange (TLS state). */
  readonly observer?: AgentExchangeObserver;
  /** Deadline of one state request. @default 5 s */
  readonly stateTimeoutMs?: number;
}

/** What delivery tells about the agents' mTLS link (see `TlsStateBook`). */
export interface AgentExchangeObserver {
  /** An agent answered `GET /v1/state`; `tls` is its `tls` member as received. */
  agentState(pod: string, tls: unknown): void;
  agentFailed(pod: string, message: string): void;
  /** An apply was answered. */
  exchanged(pod: string): void;
  /** The agents now; the others are gone. */
  retainAgents(pods: ReadonlySet<string>): void;
}

function endpointKey(endpoint: AgentEndpoint): string {
  return `${endpoint.name}@${endpoint.host}:${endpoint.port}`;
}

export class AgentDelivery {
  readonly #options: AgentDeliveryOptions;
  #desired: DesiredConfig | undefined;
  /** Agents known to run the desired configuration: endpoint key → digest. */
  readonly #confirmed = new Map<string, string>();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: AgentDeliveryOptions) {
    this.#options = options;
  }

  get desired(): DesiredConfig | undefined {
    return this.#desired;
  }

  setDesired(desired: DesiredConfig): void {
    this.#desired = desired;
  }

  /** Forgets what agents run (after losing leadership another replica may have changed it). */
  forget(): void {
    this.#confirmed.clear();
  }

  /** Applies the desired configuration to every agent not confirmed on it. */
  deliver(): Promise<readonly AgentApplyResult[]> {
    return this.#serial(async () => {
      const desired = this.#desired;
      if (desired === undefined) return [];
      const pending = this.#options.discovery
        .endpoints()
        .filter((endpoint) => this.#confirmed.get(endpointKey(endpoint)) !== desired.digest);
      return this.#apply(desired, pending);
    });
  }

  /** Asks every agent what it runs and applies to those that differ. */
  sync(): Promise<readonly AgentApplyResult[]> {
    return this.#serial(async () => {
      const desired = this.#desired;
      if (desired === undefined) return [];
      const endpoints = this.#options.discovery.endpoints();
      const { observer } = this.#options;
      observer?.retainAgents(new Set(endpoints.map((endpoint) => endpoint.name)));
      const current = await Promise.all(
        endpoints.map(async (endpoint) => {
          const state = await this.#options.client.state(endpoint, {
            timeoutMs: this.#options.stateTimeoutMs ?? 5_000,
          });
          if (state.ok) observer?.agentState(endpoint.name, state.value.tls);
          else observer?.agentFailed(endpoint.name, state.error.message);
          return state.ok && sameFiles(state.value.files, desired.fileDigests);
        }),
      );
      const stale = endpoints.filter((endpoint, i) => {
        if (current[i] === true) {
          this.#confirmed.set(endpointKey(endpoint), desired.digest);
          return false;
        }
        this.#confirmed.delete(endpointKey(endpoint));
        return true;
      });
      if (stale.length > 0) {
        this.#options.logger.info(
          { agents: stale.map((endpoint) => endpoint.name) },
          'agents run another configuration; applying the current one',
        );
      }
      return this.#apply(desired, stale);
    });
  }

  async #apply(
    desired: DesiredConfig,
    endpoints: readonly AgentEndpoint[],
  ): Promise<readonly AgentApplyResult[]> {
    if (endpoints.length === 0) return [];
    const results = await applyToAgents(
      this.#options.client,
      endpoints,
      desired.encoded,
      this.#options.fanOut ?? {},
    );
    for (const result of results) {
      const key = endpointKey(result.endpoint);
      if (result.ok) {
        this.#confirmed.set(key, desired.digest);
        this.#options.observer?.exchanged(result.endpoint.name);
        this.#options.metrics.deliveries.inc({
          agent: result.endpoint.name,
          result: result.response.changed ? 'applied' : 'unchanged',
        });
        if (result.response.reloaded) {
          this.#options.metrics.reloads.inc({ agent: result.endpoint.name });
        } else if ((result.response.runtimeChanges ?? 0) > 0) {
          this.#options.metrics.runtimeUpdates.inc({ agent: result.endpoint.name });
        }
      } else {
        this.#confirmed.delete(key);
        this.#options.metrics.deliveries.inc({
          agent: result.endpoint.name,
          result: result.error.reason,
        });
        this.#options.logger.warn(
          { agent: result.endpoint.name, reason: result.error.reason, attempts: result.attempts },
          result.error.message,
        );
      }
    }
    return results;
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

function sameFiles(
  files: readonly { readonly path: string; readonly digest: string }[],
  wanted: ReadonlyMap<string, string>,
): boolean {
  if (files.length !== wanted.size) return false;
  return files.every((file) => wanted.get(file.path) === file.digest);
}
