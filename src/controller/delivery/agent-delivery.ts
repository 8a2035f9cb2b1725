/**
 * Keeps every agent on the desired configuration. `deliver()` applies it to the agents not
 * yet confirmed on it (in parallel, through the agent client's fan-out); `sync()` asks each
 * agent for its state and applies to those whose files differ, so a new or restarted agent,
 * or one that failed earlier, gets the current configuration.
 *
 * One call per agent at a time, and no agent waits for another: an agent still answering an
 * earlier call is passed over (`waiting`) and, once that call ends, `onAgentFree` asks for
 * another delivery. So a slow or stopped agent holds up neither the others nor the next change.
 *
 * An agent confirmed on the previous desired configuration, when the two differ only in
 * server slots (runtimePlan), gets a runtime change (`POST /v1/runtime-change`: the slots and
 * the digests of both sets) instead of the complete set; when it refuses (it holds another
 * set, or the change needs a reload there), it gets the complete set.
 */
import type { Logger } from 'pino';
import { type ApplyFile, type EncodedApply, encodeApply } from '../../agent-api/apply-encoding.ts';
import { type RuntimeChangeRequestBody, configFileName } from '../../agent-api/api-types.ts';
import { contentDigest } from '../../sandbox/content-digest.ts';
import { type FileDigest, fileSetDigest } from '../../agent-api/file-set-digest.ts';
import { agentReasons } from '../../agent-api/reasons.ts';
import { type FileSetText, type ServerChange, runtimePlan } from '../../haproxy/runtime-changes.ts';
import type { AgentClient, AgentEndpoint } from './agent-client.ts';
import type { AgentDiscovery } from './agent-discovery.ts';
import {
  type AgentApplyResult,
  type AgentCall,
  type FanOutOptions,
  callAgents,
} from './agent-fanout.ts';
import type { ControllerMetrics } from '../status/controller-metrics.ts';

export interface DesiredConfig {
  readonly digest: string;
  readonly files: readonly ApplyFile[];
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
  files: readonly ApplyFile[],
  digest: string,
  known: KnownConfig = {},
): DesiredConfig {
  const fileDigests = new Map(
    known.fileDigests?.map((file) => [file.path, file.digest]) ??
      files.map((file) => [file.path, contentDigest(file.content)]),
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

/** What one delivery did: the agents called and their answers, and those passed over. */
export interface DeliveryRound {
  readonly results: readonly AgentApplyResult[];
  /** Agents not on the desired configuration whose earlier call had not ended. */
  readonly waiting: readonly AgentEndpoint[];
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
  /** An agent passed over while busy is free again; deliver again to bring it up to date. */
  readonly onAgentFree?: () => void;
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
  /** Agents with a call in flight: endpoint key → what withdraws the call. */
  readonly #busy = new Map<string, AbortController>();
  /** Busy agents that a later delivery passed over. */
  readonly #passedOver = new Set<string>();

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
  async deliver(): Promise<DeliveryRound> {
    const desired = this.#desired;
    if (desired === undefined) return { results: [], waiting: [] };
    const endpoints = this.#options.discovery.endpoints();
    this.#withdrawGone(endpoints);
    const pending = endpoints.filter(
      (endpoint) => this.#confirmed.get(endpointKey(endpoint)) !== desired.digest,
    );
    return this.#applyToFree(desired, pending);
  }

  /** Asks every agent not busy what it runs and applies to those that differ. */
  async sync(): Promise<DeliveryRound> {
    const desired = this.#desired;
    if (desired === undefined) return { results: [], waiting: [] };
    const endpoints = this.#options.discovery.endpoints();
    this.#withdrawGone(endpoints);
    const { observer } = this.#options;
    observer?.retainAgents(new Set(endpoints.map((endpoint) => endpoint.name)));
    const free = endpoints.filter((endpoint) => !this.#busy.has(endpointKey(endpoint)));
    const current = await Promise.all(
      free.map(async (endpoint) => {
        const state = await this.#options.client.state(endpoint, {
          timeoutMs: this.#options.stateTimeoutMs ?? 5_000,
        });
        if (state.ok) observer?.agentState(endpoint.name, state.value.tls);
        else observer?.agentFailed(endpoint.name, state.error.message);
        return state.ok && sameFiles(state.value.files, desired.fileDigests);
      }),
    );
    const stale = free.filter((endpoint, i) => {
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
    return this.#applyToFree(desired, stale);
  }

  /**
   * Withdraws the calls in flight to agents discovery no longer lists (the Pod deleted, being
   * deleted or given another address): retrying them can only end in a timeout or an
   * unreachable host, which is not the agent failing a delivery.
   */
  #withdrawGone(endpoints: readonly AgentEndpoint[]): void {
    const listed = new Set(endpoints.map(endpointKey));
    for (const [key, call] of this.#busy) if (!listed.has(key)) call.abort();
  }

  /**
   * Applies `desired` to those of `endpoints` with no call in flight; the others are passed
   * over, and `onAgentFree` is called when their call ends.
   */
  async #applyToFree(
    desired: DesiredConfig,
    endpoints: readonly AgentEndpoint[],
  ): Promise<DeliveryRound> {
    const waiting = endpoints.filter((endpoint) => this.#busy.has(endpointKey(endpoint)));
    for (const endpoint of waiting) this.#passedOver.add(endpointKey(endpoint));
    const free = endpoints.filter((endpoint) => !this.#busy.has(endpointKey(endpoint)));
    const unsettled = new Set(free.map(endpointKey));
    for (const key of unsettled) this.#busy.set(key, new AbortController());
    const settle = (key: string): void => {
      if (!unsettled.delete(key)) return;
      this.#busy.delete(key);
      if (this.#passedOver.delete(key)) this.#options.onAgentFree?.();
    };
    try {
      const results = await this.#apply(desired, free, (result) => {
        this.#record(desired, result);
        settle(endpointKey(result.endpoint));
      });
      return { results, waiting };
    } finally {
      for (const key of [...unsettled]) settle(key);
    }
  }

  /**
   * One call per agent: a runtime change to an agent confirmed on the previous desired
   * configuration when the two differ only in server slots, the complete set otherwise or
   * after the agent refused the change. Each result goes to `onResult` as it comes.
   */
  async #apply(
    desired: DesiredConfig,
    endpoints: readonly AgentEndpoint[],
    onResult: (result: AgentApplyResult) => void,
  ): Promise<readonly AgentApplyResult[]> {
    if (endpoints.length === 0) return [];
    const { client, metrics, logger } = this.#options;
    const step = this.#runtimeStep(desired);
    const call: AgentCall = async (endpoint, options) => {
      if (step?.body !== undefined && this.#confirmed.get(endpointKey(endpoint)) === step.from) {
        const changed = await client.runtimeChange(endpoint, step.body, options);
        if (changed.ok || changed.error.kind !== 'withdrawn') {
          metrics.runtimeChanges.inc({
            agent: endpoint.name,
            result: changed.ok ? 'applied' : changed.error.reason,
          });
        }
        if (changed.ok || !fullSetAfter.has(changed.error.reason)) return changed;
        logger.info(
          { agent: endpoint.name, reason: changed.error.reason },
          'agent refused the runtime change; sending the complete set',
        );
      }
      return client.apply(endpoint, desired.encoded(), options);
    };
    return callAgents(call, endpoints, this.#options.fanOut ?? {}, {
      signalFor: (endpoint) => this.#busy.get(endpointKey(endpoint))?.signal,
      onResult,
    });
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
    if (result.error.kind === 'withdrawn') {
      this.#options.logger.info(
        { agent: result.endpoint.name, attempts: result.attempts },
        'delivery withdrawn: the agent left discovery (its Pod is deleted, being deleted or re-addressed)',
      );
      return;
    }
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

function sameFiles(
  files: readonly { readonly path: string; readonly digest: string }[],
  wanted: ReadonlyMap<string, string>,
): boolean {
  if (files.length !== wanted.size) return false;
  return files.every((file) => wanted.get(file.path) === file.digest);
}
