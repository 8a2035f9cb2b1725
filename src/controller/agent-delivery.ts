/**
 * Keeps every agent on the desired configuration. `deliver()` applies it to the agents not
 * yet confirmed on it (in parallel, through the agent client's fan-out); `sync()` asks each
 * agent for its state and applies to those whose files differ, so a new or restarted agent,
 * or one that failed earlier, gets the current configuration. One operation at a time.
 *
 * An agent confirmed on the previous desired configuration, when the two differ only in
 * server slots (runtimePlan), gets a runtime change (`POST /v1/runtime-change`: the slots and
 * the digests of both sets) instead of the complete set; when it refuses (it holds another
 * set, or the change needs a reload there), it gets the complete set.
 */
import type { Logger } from 'pino';
import { type EncodedApply, encodeApply } from '../agent-api/apply-encoding.ts';
import { type RuntimeChangeRequestBody, configFileName } from '../agent-api/api-types.ts';
import { digestOf } from '../agent-api/apply-request.ts';
import { fileSetDigest } from '../agent-api/file-set-digest.ts';
import { agentReasons } from '../agent-api/reasons.ts';
import {
  type FileDigest,
  type FileSetText,
  type ServerChange,
  runtimePlan,
} from '../agent-api/runtime-changes.ts';
import type { AgentClient, AgentEndpoint, BundleFile } from './agent-client.ts';
import type { AgentDiscovery } from './agent-discovery.ts';
import { type AgentApplyResult, type FanOutOptions, callAgents } from './agent-fanout.ts';
import type { ControllerMetrics } from './controller-metrics.ts';

export interface DesiredConfig {
  readonly digest: string;
  readonly files: readonly BundleFile[];
  /** haproxy.cfg's text, decoded the first time it is needed. */
  configText(): string;
  /** path → `sha256:` digest, to compare with an agent's reported files. */
  readonly fileDigests: ReadonlyMap<string, string>;
  /** The set's digest as agents compute it (file-set-digest.ts), for runtime changes. */
  readonly setDigest: string;
  /** The complete set as an apply request, encoded the first time it is needed. */
  encoded(): EncodedApply;
  /** The slot changes from the configuration of digest `digest`, when known. */
  readonly runtimeFrom?: RuntimeFrom;
}

export interface RuntimeFrom {
  readonly digest: string;
  readonly changes: readonly ServerChange[];
}

/** What the caller already knows of a set (a slot update's), so it is not derived again. */
export interface KnownConfig {
  readonly fileDigests?: readonly FileDigest[];
  readonly configText?: string;
  readonly runtimeFrom?: RuntimeFrom;
}

/** Each file hashed once; the apply request is encoded only when an agent needs the full set. */
export function desiredConfig(
  files: readonly BundleFile[],
  digest: string,
  known: KnownConfig = {},
): DesiredConfig {
  const fileDigests = new Map(
    known.fileDigests?.map((file) => [file.path, file.digest]) ??
      files.map((file) => [file.path, digestOf(file.content)]),
  );
  let encoded: EncodedApply | undefined;
  let text = known.configText;
  return {
    ...(known.runtimeFrom === undefined ? {} : { runtimeFrom: known.runtimeFrom }),
    digest,
    files,
    configText: () =>
      (text ??= Buffer.from(
        files.find((file) => file.path === configFileName)?.content ?? new Uint8Array(),
      ).toString('utf8')),
    fileDigests,
    setDigest: fileSetDigest(
      [...fileDigests].map(([path, fileDigest]) => ({ path, digest: fileDigest })),
    ),
    encoded: () => (encoded ??= encodeApply(files, fileDigests)),
  };
}

/** The runtime change from one desired configuration to the next, encoded for the agents. */
interface RuntimeStep {
  readonly from: string;
  readonly to: string;
  /** Undefined when the step needs a reload (runtime-changes.ts). */
  readonly body: Buffer | undefined;
}

function setText(config: DesiredConfig): FileSetText {
  return {
    files: [...config.fileDigests].map(([path, digest]) => ({ path, digest })),
    config: config.configText(),
  };
}

/**
 * The slot changes from `from` to `to` (runtimePlan), undefined when a reload is needed: those a
 * slot update named from its previous set (endpoint-update.ts computed them with the same
 * plan), or runtimePlan over both sets.
 */
function stepChanges(from: DesiredConfig, to: DesiredConfig): readonly ServerChange[] | undefined {
  if (to.runtimeFrom?.digest === from.digest) return to.runtimeFrom.changes;
  const plan = runtimePlan(setText(from), setText(to));
  return plan.runtime ? plan.changes : undefined;
}

/** The compact request that turns an agent on `from` into one on `to`, when slots alone differ. */
function runtimeStep(from: DesiredConfig, to: DesiredConfig): RuntimeStep {
  const changes = stepChanges(from, to);
  if (changes === undefined || changes.length === 0) {
    return { from: from.digest, to: to.digest, body: undefined };
  }
  const request: RuntimeChangeRequestBody = {
    baseDigest: from.setDigest,
    resultDigest: to.setDigest,
    changes,
  };
  return { from: from.digest, to: to.digest, body: Buffer.from(JSON.stringify(request)) };
}

/**
 * Agent refusals after which the complete set is sent: the agent holds another set, the change
 * gives another result there or needs a reload, or it predates the runtime-change operation.
 */
const fullSetAfter: ReadonlySet<string> = new Set([
  agentReasons.RuntimeBaseMismatch,
  agentReasons.RuntimeResultMismatch,
  agentReasons.RuntimeNotExpressible,
  agentReasons.NotFound,
]);

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
  /** The desired configuration before this one: agents confirmed on it get a runtime change. */
  #previous: DesiredConfig | undefined;
  #step: RuntimeStep | undefined;
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
    if (this.#desired !== undefined && this.#desired.digest !== desired.digest) {
      this.#previous = this.#desired;
    }
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
    const { client } = this.#options;
    const fanOut = this.#options.fanOut ?? {};
    const step = this.#runtimeStep(desired);
    const body = step?.body;
    const quick =
      body === undefined
        ? []
        : endpoints.filter((endpoint) => this.#confirmed.get(endpointKey(endpoint)) === step?.from);
    const full = endpoints.filter((endpoint) => !quick.includes(endpoint));
    const applyFull = async (
      pending: readonly AgentEndpoint[],
    ): Promise<readonly AgentApplyResult[]> =>
      pending.length === 0
        ? []
        : callAgents(
            (endpoint, options) => client.apply(endpoint, desired.encoded(), options),
            pending,
            fanOut,
          );
    const [changed, applied] = await Promise.all([
      body === undefined || quick.length === 0
        ? []
        : callAgents(
            (endpoint, options) => client.runtimeChange(endpoint, body, options),
            quick,
            fanOut,
          ),
      applyFull(full),
    ]);
    for (const result of changed) {
      this.#options.metrics.runtimeChanges.inc({
        agent: result.endpoint.name,
        result: result.ok ? 'applied' : result.error.reason,
      });
    }
    const refused = changed.filter((result) => !result.ok && fullSetAfter.has(result.error.reason));
    if (refused.length > 0) {
      this.#options.logger.info(
        {
          agents: refused.map((result) => result.endpoint.name),
          reasons: refused.map((result) => (result.ok ? '' : result.error.reason)),
        },
        'agents refused the runtime change; sending the complete set',
      );
    }
    const retried = await applyFull(refused.map((result) => result.endpoint));
    const results = [
      ...changed.filter((result) => !refused.includes(result)),
      ...applied,
      ...retried,
    ];
    for (const result of results) this.#record(desired, result);
    return results;
  }

  /** The runtime change from the previous desired configuration, computed once per step. */
  #runtimeStep(desired: DesiredConfig): RuntimeStep | undefined {
    const previous = this.#previous;
    if (previous === undefined) return undefined;
    if (this.#step?.from !== previous.digest || this.#step.to !== desired.digest) {
      this.#step = runtimeStep(previous, desired);
    }
    return this.#step;
  }

  #record(desired: DesiredConfig, result: AgentApplyResult): void {
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
      return;
    }
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
