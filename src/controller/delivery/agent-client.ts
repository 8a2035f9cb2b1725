/**
 * The controller's client of the agents' management API. In mTLS mode every request goes
 * over HTTPS with the controller identity from its own `--tls-dir`, through
 * `AgentConnectionPool` (never plain HTTP); in legacy mode over HTTP with Basic
 * authentication from DATAPLANE_USERNAME / DATAPLANE_PASSWORD.
 */
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import {
  type AgentStateBody,
  type ApplyResponseBody,
  agentPaths,
} from '../../agent-api/api-types.ts';
import type { EncodedApply } from '../../agent-api/apply-encoding.ts';
import type { TlsMaterialSource } from '../../tls/material-watcher.ts';
import { type AgentCallError, answerError, transportError } from './agent-call-error.ts';
import { AgentConnectionPool } from './agent-connection-pool.ts';
import { isRecord } from '../../is-record.ts';

export interface AgentEndpoint {
  /** How messages name the agent, for example its Pod name. */
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

export type AgentTransportConfig =
  | {
      readonly mode: 'mtls';
      /** The controller identity and trust (`--tls-dir`), usually a TlsMaterialWatcher. */
      readonly material: TlsMaterialSource;
      /** DNS SAN agents' certificates must carry (`AGENT_TLS_SERVER_NAME`). */
      readonly serverName: string;
      /** Longest life of a connection pool. @default 30 seconds */
      readonly poolMaxAgeMs?: number;
    }
  | { readonly mode: 'legacy-basic-auth'; readonly username: string; readonly password: string };

export type AgentCallResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: AgentCallError };

/** Largest answer read from an agent. */
const maxAnswerBytes = 4 * 1024 * 1024;

export interface CallOptions {
  /** @default 30 seconds */
  readonly timeoutMs?: number;
  /** Withdraws the call: it ends at once with the error kind `withdrawn`. */
  readonly signal?: AbortSignal;
}

export class AgentClient {
  readonly #transport: AgentTransportConfig;
  readonly #pool: AgentConnectionPool | undefined;
  readonly #legacyAgent: HttpAgent | undefined;

  constructor(transport: AgentTransportConfig) {
    this.#transport = transport;
    if (transport.mode === 'mtls') {
      this.#pool = new AgentConnectionPool({
        material: transport.material,
        serverName: transport.serverName,
        ...(transport.poolMaxAgeMs === undefined ? {} : { maxAgeMs: transport.poolMaxAgeMs }),
      });
    } else {
      this.#legacyAgent = new HttpAgent({ keepAlive: true, maxSockets: 4 });
    }
  }

  /** How many times the mTLS connection pool was (re)built. */
  get poolRebuilds(): number {
    return this.#pool?.rebuilds ?? 0;
  }

  async apply(
    endpoint: AgentEndpoint,
    request: EncodedApply,
    options: CallOptions = {},
  ): Promise<AgentCallResult<ApplyResponseBody>> {
    return this.#call(endpoint, 'POST', agentPaths.apply, request.body, options, isApplyResponse);
  }

  /** `POST /v1/runtime-change` with an encoded `RuntimeChangeRequestBody` (api-types.ts). */
  async runtimeChange(
    endpoint: AgentEndpoint,
    body: Buffer,
    options: CallOptions = {},
  ): Promise<AgentCallResult<ApplyResponseBody>> {
    return this.#call(endpoint, 'POST', agentPaths.runtimeChange, body, options, isApplyResponse);
  }

  async state(
    endpoint: AgentEndpoint,
    options: CallOptions = {},
  ): Promise<AgentCallResult<AgentStateBody>> {
    return this.#call(endpoint, 'GET', agentPaths.state, undefined, options, isStateBody);
  }

  close(): void {
    this.#pool?.close();
    this.#legacyAgent?.destroy();
  }

  async #call<T>(
    endpoint: AgentEndpoint,
    method: 'GET' | 'POST',
    path: string,
    body: Buffer | undefined,
    options: CallOptions,
    accept: (value: unknown) => value is T,
  ): Promise<AgentCallResult<T>> {
    const name = `${endpoint.name} (${endpoint.host}:${endpoint.port})`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(body.byteLength);
    }
    let agent: HttpAgent | HttpsAgent;
    let release = (): void => undefined;
    const transport = this.#transport;
    if (this.#pool !== undefined) {
      const lease = this.#pool.acquire();
      if (!lease.ok) {
        return {
          ok: false,
          error: {
            kind: 'local-material',
            reason: lease.reason,
            message: lease.message,
            retryable: false,
          },
        };
      }
      agent = lease.agent;
      release = lease.release;
    } else {
      if (transport.mode !== 'legacy-basic-auth' || this.#legacyAgent === undefined) {
        throw new Error('AgentClient has neither an mTLS pool nor a legacy agent');
      }
      agent = this.#legacyAgent;
      const credentials = Buffer.from(`${transport.username}:${transport.password}`).toString(
        'base64',
      );
      headers.authorization = `Basic ${credentials}`;
    }
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    const signal =
      options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
    try {
      const answer = await send(
        transport.mode === 'mtls' ? 'https' : 'http',
        { host: endpoint.host, port: endpoint.port, method, path, headers, agent, signal },
        body,
      );
      let parsed: unknown;
      try {
        parsed = JSON.parse(answer.text);
      } catch {
        parsed = undefined;
      }
      if (answer.status >= 200 && answer.status < 300 && accept(parsed))
        return { ok: true, value: parsed };
      return { ok: false, error: answerError(answer.status, parsed, name) };
    } catch (error) {
      const ended = timeout.aborted
        ? 'timed-out'
        : options.signal?.aborted === true
          ? 'withdrawn'
          : undefined;
      return { ok: false, error: transportError(error, name, ended) };
    } finally {
      release();
    }
  }
}

interface SendOptions {
  readonly host: string;
  readonly port: number;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly agent: HttpAgent | HttpsAgent;
  readonly signal: AbortSignal;
}

async function send(
  scheme: 'https' | 'http',
  options: SendOptions,
  body: Buffer | undefined,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const onResponse = (response: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > maxAnswerBytes)
          response.destroy(new Error(`the answer exceeds ${maxAnswerBytes} bytes`));
        else chunks.push(chunk);
      });
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
      response.on('error', reject);
    };
    const call =
      scheme === 'https' ? httpsRequest(options, onResponse) : httpRequest(options, onResponse);
    call.on('error', reject);
    call.end(body);
  });
}

function isApplyResponse(value: unknown): value is ApplyResponseBody {
  return (
    isRecord(value) &&
    typeof value.changed === 'boolean' &&
    typeof value.reloaded === 'boolean' &&
    typeof value.generation === 'number' &&
    typeof value.configDigest === 'string' &&
    (value.runtimeChanges === undefined || typeof value.runtimeChanges === 'number')
  );
}

function isStateBody(value: unknown): value is AgentStateBody {
  return (
    isRecord(value) &&
    typeof value.generation === 'number' &&
    Array.isArray(value.files) &&
    isRecord(value.haproxy) &&
    isRecord(value.tls)
  );
}
