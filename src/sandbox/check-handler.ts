/**
 * `POST /v1/check` (sandbox-protocol.ts). Each request is hostile: the body is read only once
 * a check slot is free (so memory is bounded by the running checks and the last request's
 * files, not by the connections), up to the agents' apply body limit, parsed by the agents'
 * own request parser (files named by digest alone taken from the last request's, held in
 * memory: kept-contents.ts), written into a fresh private directory and checked there.
 *
 * Checks wait in the lane their request names (check-gate.ts: reviews cannot fill the sandbox
 * for delivery), and a check whose caller is gone (its connection closed: the review was
 * answered or given up, the client's deadline passed) is dropped while it waits and its haproxy
 * killed while it runs, so no check's time goes to an answer nobody reads.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { finished } from 'node:stream/promises';
import type { Logger } from 'pino';
import { configFileName } from '../agent-api/api-types.ts';
import { type DesiredFile, maxBodyBytes } from '../agent-api/apply-request.ts';
import { type AgentFailure, agentReasons } from '../agent-api/reasons.ts';
import { describeError } from '../errors.ts';
import { CheckGate, type CheckLane } from './check-gate.ts';
import { createCheckWorkspace } from './check-workspace.ts';
import { runHAProxyCheck } from './haproxy-check-run.ts';
import { KeptContents } from './kept-contents.ts';
import type { SandboxLimits } from './sandbox-limits.ts';
import { failure, isJson, readBody, send, sendFailure } from './sandbox-http.ts';
import {
  type CheckOutcome,
  type ContentUnknown,
  contentUnknownReason,
  contentUnknownStatus,
} from './sandbox-protocol.ts';

export interface CheckHandlerOptions {
  /** The sandbox's own private directory; each check gets a fresh one inside. */
  readonly workDir: string;
  readonly haproxyBinary: string;
  /** The command line that cuts each check off the network (network-isolation.ts), once ready. */
  readonly isolation: () => readonly string[];
  readonly limits: SandboxLimits;
  readonly logger: Logger;
}

/** What a check request is answered with. */
type Answer = CheckOutcome | AgentFailure | ContentUnknown;

export class CheckHandler {
  readonly #options: CheckHandlerOptions;
  readonly #gate: CheckGate;
  readonly #bodyLimit: number;
  readonly #kept = new KeptContents();
  /** Removals of finished checks' directories still under way. */
  readonly #removals = new Set<Promise<void>>();

  constructor(options: CheckHandlerOptions) {
    this.#options = options;
    this.#gate = new CheckGate(options.limits.concurrent, options.limits.waiting);
    this.#bodyLimit = maxBodyBytes(options.limits.request);
  }

  /** The checks running and waiting in each lane (the health answer's). */
  load(): ReturnType<CheckGate['load']> {
    return this.#gate.load();
  }

  /** Answers one check request waiting in `lane`. */
  async handle(request: IncomingMessage, response: ServerResponse, lane: CheckLane): Promise<void> {
    const { limits, logger } = this.#options;
    if (!isJson(request)) {
      sendFailure(
        response,
        failure(
          agentReasons.UnsupportedMediaType,
          'Send the check request as Content-Type: application/json.',
        ),
      );
      return;
    }
    if (Number(request.headers['content-length']) > this.#bodyLimit) {
      request.resume();
      await finished(request);
      sendFailure(response, this.#tooLarge());
      return;
    }
    const started = performance.now();
    // Closed before the answer: the caller is gone (after the answer, `close` changes nothing).
    const callerGone = new AbortController();
    response.once('close', () => {
      callerGone.abort();
    });
    const admitted = await this.#gate.run(() => this.#check(request, callerGone.signal), {
      lane,
      signal: callerGone.signal,
    });
    if (callerGone.signal.aborted) {
      logger.info(
        { lane, durationMs: Math.round(performance.now() - started) },
        'check dropped: its caller is gone',
      );
      return;
    }
    this.#answer(
      response,
      admitted ?? {
        ok: false,
        failure: 'unavailable',
        message: `The check sandbox is busy (${limits.concurrent} checks run, ${limits.waiting} wait in the ${lane} lane); try again.`,
      },
      started,
    );
  }

  #tooLarge(): AgentFailure {
    return failure(
      agentReasons.TooLarge,
      `The request body exceeds ${this.#bodyLimit} bytes; a check takes what an agent apply takes.`,
    );
  }

  /** Reads and parses the request, then checks its files (a check slot is held). */
  async #check(request: IncomingMessage, signal: AbortSignal): Promise<Answer> {
    const body = await readBody(request, this.#bodyLimit);
    if (body === undefined) return this.#tooLarge();
    let decoded: unknown;
    try {
      decoded = JSON.parse(body.toString('utf8'));
    } catch (error) {
      return failure(
        agentReasons.RequestInvalid,
        `The body is not JSON (${describeError(error)}); send {"files": [...]}.`,
      );
    }
    const parsed = this.#kept.parse(decoded, this.#options.limits.request);
    if (!parsed.ok) return parsed;
    return this.#run(parsed.files, signal);
  }

  /** `haproxy -c` on `files` in a fresh private directory, removed while the answer goes out. */
  async #run(files: readonly DesiredFile[], signal: AbortSignal): Promise<CheckOutcome> {
    const { limits, logger } = this.#options;
    // Earlier checks' directories are removed while later checks run; a check waits for
    // them only while as many are still being removed as checks run at once, so at most
    // twice that many directories are ever on disk.
    if (this.#removals.size >= limits.concurrent) await Promise.all(this.#removals);
    const workspace = await createCheckWorkspace(this.#options.workDir, files);
    try {
      return await runHAProxyCheck({
        configDir: workspace.configDir,
        scratchDir: workspace.scratchDir,
        haproxyBinary: this.#options.haproxyBinary,
        isolation: this.#options.isolation(),
        limits,
        signal,
        config: () =>
          files.find((file) => file.path === configFileName)?.content.toString('utf8') ?? '',
      });
    } finally {
      // Removed while the answer goes out; a leftover is logged.
      const removal = workspace.remove().catch((error: unknown) => {
        logger.warn({ err: describeError(error) }, 'could not remove a check workspace');
      });
      this.#removals.add(removal);
      void removal.then(() => this.#removals.delete(removal));
    }
  }

  #answer(response: ServerResponse, outcome: Answer, started: number): void {
    const { logger } = this.#options;
    if ('reason' in outcome && outcome.reason === contentUnknownReason) {
      // Not a fault of the files: the client sends them again with their contents.
      logger.info({ field: outcome.field }, 'check request names content not held');
      send(response, contentUnknownStatus, {
        error: {
          reason: outcome.reason,
          code: outcome.reason,
          message: outcome.message,
          field: outcome.field,
        },
      });
      return;
    }
    if ('reason' in outcome) {
      logger.warn({ reason: outcome.reason }, `check request refused: ${outcome.message}`);
      sendFailure(response, outcome);
      return;
    }
    logger.info(
      {
        ok: outcome.ok,
        ...(outcome.ok ? {} : { failure: outcome.failure }),
        durationMs: Math.round(performance.now() - started),
      },
      'check answered',
    );
    send(response, 200, outcome);
  }
}
