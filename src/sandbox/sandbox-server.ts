/**
 * The check sandbox's HTTP server on its Unix socket (see sandbox-protocol.ts). Each request
 * is hostile: the body is read only once a check slot is free (so memory is bounded by the
 * running checks and the last request's files, not by the connections), up to the agents' apply body limit, parsed by the
 * agents' own request parser (files named by digest alone taken from the last request's, held
 * in memory: kept-contents.ts), written into a fresh private directory and checked there. Every
 * answer closes its connection; an unexpected error becomes a 500 answer, never a crash.
 *
 * Checks wait in the lane their request names (check-gate.ts: reviews cannot fill the sandbox
 * for delivery), and a check whose caller is gone (its connection closed: the review was
 * answered or given up, the client's deadline passed) is dropped while it waits and its haproxy
 * killed while it runs, so no check's time goes to an answer nobody reads.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { finished } from 'node:stream/promises';
import type { Logger } from 'pino';
import { configFileName } from '../agent-api/api-types.ts';
import { maxBodyBytes } from '../agent-api/apply-request.ts';
import {
  type AgentFailure,
  agentReasons,
  errorBodyOf,
  reasonStatus,
} from '../agent-api/reasons.ts';
import { describeError } from '../errors.ts';
import { CheckGate, type CheckLane, checkLanes } from './check-gate.ts';
import { createCheckWorkspace } from './check-workspace.ts';
import { runHAProxyCheck } from './haproxy-check-run.ts';
import { KeptContents } from './kept-contents.ts';
import type { SandboxLimits } from './sandbox-limits.ts';
import {
  type CheckOutcome,
  type ContentUnknown,
  contentUnknownReason,
  contentUnknownStatus,
  sandboxPaths,
} from './sandbox-protocol.ts';

export interface SandboxHandlerOptions {
  /** The sandbox's own private directory; each check gets a fresh one inside. */
  readonly workDir: string;
  readonly haproxyBinary: string;
  /** The command line that cuts each check off the network (network-isolation.ts), once ready. */
  readonly isolation: () => readonly string[];
  readonly limits: SandboxLimits;
  readonly logger: Logger;
  /**
   * False until the sandbox has dropped to its user and found its tools: until then every
   * request (the health check too) is answered 503, so nothing is checked as root.
   */
  readonly ready: () => boolean;
}

/** Time a client has to send its headers, and its whole request. */
const headersTimeoutMs = 10_000;
const requestTimeoutMs = 120_000;

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    connection: 'close',
  });
  response.end(text);
}

function sendFailure(response: ServerResponse, failure: AgentFailure): void {
  send(response, reasonStatus[failure.reason], errorBodyOf(failure));
}

function failure(reason: AgentFailure['reason'], message: string): AgentFailure {
  return { reason, code: reason, message };
}

/**
 * The body, or undefined when it is longer than `limit` bytes. A longer body is read to its
 * end and dropped, so the client gets the answer instead of a reset connection.
 */
async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const bytes = chunk as Buffer;
    size += bytes.byteLength;
    if (size <= limit) chunks.push(bytes);
  }
  return size > limit ? undefined : Buffer.concat(chunks);
}

/** What a check request is answered with. */
type Answer = CheckOutcome | AgentFailure | ContentUnknown;

function isJson(request: IncomingMessage): boolean {
  const type = request.headers['content-type'] ?? '';
  return /^application\/json\s*(;|$)/i.test(type);
}

export function createSandboxServer(options: SandboxHandlerOptions): Server {
  const { limits, logger } = options;
  const gate = new CheckGate(limits.concurrent, limits.waiting);
  const bodyLimit = maxBodyBytes(limits.request);
  const kept = new KeptContents();
  /** Removals of finished checks' directories still under way. */
  const removals = new Set<Promise<void>>();

  const check = async (
    request: IncomingMessage,
    response: ServerResponse,
    lane: CheckLane,
  ): Promise<void> => {
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
    const tooLarge = failure(
      agentReasons.TooLarge,
      `The request body exceeds ${bodyLimit} bytes; a check takes what an agent apply takes.`,
    );
    if (Number(request.headers['content-length']) > bodyLimit) {
      request.resume();
      await finished(request);
      sendFailure(response, tooLarge);
      return;
    }
    const started = performance.now();
    // Closed before the answer: the caller is gone (after the answer, `close` changes nothing).
    const callerGone = new AbortController();
    response.once('close', () => {
      callerGone.abort();
    });
    const work = async (): Promise<Answer> => {
      const body = await readBody(request, bodyLimit);
      if (body === undefined) return tooLarge;
      let decoded: unknown;
      try {
        decoded = JSON.parse(body.toString('utf8'));
      } catch (error) {
        return failure(
          agentReasons.RequestInvalid,
          `The body is not JSON (${describeError(error)}); send {"files": [...]}.`,
        );
      }
      const parsed = kept.parse(decoded, limits.request);
      if (!parsed.ok) return parsed;
      // Earlier checks' directories are removed while later checks run; a check waits for
      // them only while as many are still being removed as checks run at once, so at most
      // twice that many directories are ever on disk.
      if (removals.size >= limits.concurrent) await Promise.all(removals);
      const workspace = await createCheckWorkspace(options.workDir, parsed.files);
      try {
        return await runHAProxyCheck({
          configDir: workspace.configDir,
          scratchDir: workspace.scratchDir,
          haproxyBinary: options.haproxyBinary,
          isolation: options.isolation(),
          limits,
          signal: callerGone.signal,
          config: () =>
            parsed.files.find((file) => file.path === configFileName)?.content.toString('utf8') ??
            '',
        });
      } finally {
        // Removed while the answer goes out; a leftover is logged.
        const removal = workspace.remove().catch((error: unknown) => {
          logger.warn({ err: describeError(error) }, 'could not remove a check workspace');
        });
        removals.add(removal);
        void removal.then(() => removals.delete(removal));
      }
    };
    const admitted = await gate.run(work, { lane, signal: callerGone.signal });
    if (callerGone.signal.aborted) {
      logger.info(
        { lane, durationMs: Math.round(performance.now() - started) },
        'check dropped: its caller is gone',
      );
      return;
    }
    const outcome: Answer = admitted ?? {
      ok: false,
      failure: 'unavailable',
      message: `The check sandbox is busy (${limits.concurrent} checks run, ${limits.waiting} wait in the ${lane} lane); try again.`,
    };
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
  };

  const route = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '', 'http://sandbox');
    const { pathname: path } = url;
    const laneName = url.searchParams.get('lane') ?? 'delivery';
    const lane = checkLanes.find((each) => each === laneName);
    if (!options.ready()) {
      request.resume();
      sendFailure(
        response,
        failure(agentReasons.CheckUnavailable, 'The check sandbox is starting; try again.'),
      );
    } else if (request.method === 'POST' && path === sandboxPaths.check) {
      if (lane === undefined) {
        request.resume();
        sendFailure(
          response,
          failure(
            agentReasons.RequestInvalid,
            `lane=${laneName} is not a lane of the check sandbox; use ${checkLanes.join(' or ')}.`,
          ),
        );
      } else {
        await check(request, response, lane);
      }
    } else if (request.method === 'GET' && path === sandboxPaths.health) {
      send(response, 200, { status: 'ok', ...gate.load() });
    } else {
      request.resume();
      sendFailure(
        response,
        failure(
          agentReasons.NotFound,
          `${request.method ?? ''} ${path} does not exist on the check sandbox; use POST ${sandboxPaths.check} or GET ${sandboxPaths.health}.`,
        ),
      );
    }
  };

  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      logger.error({ err: describeError(error) }, 'check failed unexpectedly');
      if (response.headersSent) {
        response.destroy();
        return;
      }
      sendFailure(
        response,
        failure(agentReasons.Internal, 'The check sandbox failed unexpectedly; see its log.'),
      );
    });
  });
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = requestTimeoutMs;
  // Connections beyond the running checks and both lanes' waiting ones (plus probes) are
  // dropped at once.
  server.maxConnections = limits.concurrent + 2 * limits.waiting + 4;
  return server;
}
