/**
 * The check sandbox's HTTP server on its Unix socket (see sandbox-protocol.ts): the check
 * (check-handler.ts), the health answer, and the agents' error body for anything else. Every
 * answer closes its connection; an unexpected error becomes a 500 answer, never a crash.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { agentReasons } from '../agent-api/reasons.ts';
import { describeError } from '../errors.ts';
import { checkLanes } from './check-gate.ts';
import { CheckHandler, type CheckHandlerOptions } from './check-handler.ts';
import { failure, send, sendFailure } from './sandbox-http.ts';
import { sandboxPaths } from './sandbox-protocol.ts';

export interface SandboxHandlerOptions extends CheckHandlerOptions {
  /**
   * False until the sandbox has dropped to its user and found its tools: until then every
   * request (the health check too) is answered 503, so nothing is checked as root.
   */
  readonly ready: () => boolean;
}

/** Time a client has to send its headers, and its whole request. */
const headersTimeoutMs = 10_000;
const requestTimeoutMs = 120_000;

export function createSandboxServer(options: SandboxHandlerOptions): Server {
  const { limits, logger } = options;
  const checks = new CheckHandler(options);
  const server = createServer((request, response) => {
    route(options, checks, request, response).catch((error: unknown) => {
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

async function route(
  options: SandboxHandlerOptions,
  checks: CheckHandler,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
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
      await checks.handle(request, response, lane);
    }
  } else if (request.method === 'GET' && path === sandboxPaths.health) {
    send(response, 200, { status: 'ok', ...checks.load() });
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
}
