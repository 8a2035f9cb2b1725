/**
 * The management API (mTLS, or legacy Basic authentication): `GET /v1/state`,
 * `POST /v1/apply` and `POST /v1/runtime-change`. Authentication runs before anything else,
 * on every request; a body is read only for an authenticated request, with a size limit.
 */
import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import type { Logger } from 'pino';
import { describeError } from '../errors.ts';
import { type ApplyResponseBody, agentPaths } from '../agent-api/api-types.ts';
import { type ApplyLimits, maxBodyBytes, parseApplyRequest } from '../agent-api/apply-request.ts';
import type { ApplyOutcome } from './apply-outcome.ts';
import type { ApplyService } from './apply-service.ts';
import {
  maxRuntimeChangeBodyBytes,
  parseRuntimeChangeRequest,
} from '../agent-api/runtime-change-request.ts';
import { bodyParserErrorType, sendFailure } from './http-answers.ts';
import type { Authenticate } from './peer-auth.ts';
import { agentReasons } from '../agent-api/reasons.ts';
import type { AgentStateBody } from '../agent-api/api-types.ts';

export interface ManagementApiOptions {
  readonly authenticate: Authenticate;
  readonly applyService: ApplyService;
  readonly state: () => Promise<AgentStateBody>;
  readonly limits: ApplyLimits;
  readonly logger: Logger;
}

export function managementApi(options: ManagementApiOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(authentication(options));
  app.get(agentPaths.state, async (_request: Request, response: Response) => {
    response.json(await options.state());
  });
  app.post(
    agentPaths.apply,
    requireJson,
    express.json({ limit: maxBodyBytes(options.limits), type: 'application/json' }),
    applyHandler(options),
  );
  app.post(
    agentPaths.runtimeChange,
    requireJson,
    express.json({ limit: maxRuntimeChangeBodyBytes, type: 'application/json' }),
    runtimeChangeHandler(options),
  );
  app.use(notFound);
  app.use(errorHandler(options));
  return app;
}

/** Refuses every request its peer may not make, before anything else runs. */
function authentication(options: ManagementApiOptions): RequestHandler {
  return (request: Request, response: Response, next: NextFunction) => {
    const decision = options.authenticate(request);
    if (!decision.ok) {
      options.logger.warn(
        {
          method: request.method,
          path: request.path,
          reason: decision.reason,
          code: decision.code,
          remote: request.socket.remoteAddress,
        },
        `management request refused: ${decision.message}`,
      );
      sendFailure(response, decision, true);
      return;
    }
    response.locals.peer = decision.peer;
    next();
  };
}

function requireJson(request: Request, response: Response, next: NextFunction): void {
  if (!request.is('application/json')) {
    sendFailure(response, {
      reason: agentReasons.UnsupportedMediaType,
      code: agentReasons.UnsupportedMediaType,
      message: `Send the ${request.path} request as Content-Type: application/json.`,
    });
    return;
  }
  next();
}

/** `POST /v1/apply`: the complete set of files. */
function applyHandler(options: ManagementApiOptions): RequestHandler {
  return async (request: Request, response: Response) => {
    const parsed = parseApplyRequest(request.body, options.limits);
    if (!parsed.ok) {
      options.logger.warn(
        { reason: parsed.reason, field: parsed.field },
        `apply refused: ${parsed.message}`,
      );
      sendFailure(response, parsed);
      return;
    }
    sendOutcome(response, await options.applyService.apply(parsed.files));
  };
}

/** `POST /v1/runtime-change`: server slots against the set the agent holds. */
function runtimeChangeHandler(options: ManagementApiOptions): RequestHandler {
  return async (request: Request, response: Response) => {
    const parsed = parseRuntimeChangeRequest(request.body);
    if (!parsed.ok) {
      options.logger.warn(
        { reason: parsed.reason, field: parsed.field },
        `runtime change refused: ${parsed.message}`,
      );
      sendFailure(response, parsed);
      return;
    }
    sendOutcome(response, await options.applyService.applyRuntimeChange(parsed));
  };
}

function sendOutcome(response: Response, outcome: ApplyOutcome): void {
  if (!outcome.ok) {
    sendFailure(response, outcome);
    return;
  }
  const body: ApplyResponseBody = {
    changed: outcome.changed,
    reloaded: outcome.reloaded,
    generation: outcome.generation,
    configDigest: outcome.configDigest,
    durationMs: Math.round(outcome.durationMs * 10) / 10,
    ...(outcome.workerPid === undefined ? {} : { workerPid: outcome.workerPid }),
    ...(outcome.runtimeChanges === undefined ? {} : { runtimeChanges: outcome.runtimeChanges }),
  };
  response.json(body);
}

function notFound(request: Request, response: Response): void {
  sendFailure(response, {
    reason: agentReasons.NotFound,
    code: agentReasons.NotFound,
    message: `${request.method} ${request.path} does not exist; use GET ${agentPaths.state}, POST ${agentPaths.apply} or POST ${agentPaths.runtimeChange}.`,
  });
}

/** A body too large or not JSON, or an unexpected failure: an answer, never a crash. */
function errorHandler(options: ManagementApiOptions): ErrorRequestHandler {
  // Express recognises error handlers by their four parameters.
  return (error: unknown, request: Request, response: Response, next: NextFunction) => {
    if (response.headersSent) {
      next(error);
      return;
    }
    const type = bodyParserErrorType(error);
    if (type === 'entity.too.large') {
      sendFailure(response, {
        reason: agentReasons.TooLarge,
        code: agentReasons.TooLarge,
        message: `The request body exceeds ${request.path === agentPaths.runtimeChange ? maxRuntimeChangeBodyBytes : maxBodyBytes(options.limits)} bytes.`,
      });
      return;
    }
    if (type !== undefined) {
      sendFailure(response, {
        reason: agentReasons.RequestInvalid,
        code: agentReasons.RequestInvalid,
        message: `The request body is not valid JSON: ${describeError(error)}`,
      });
      return;
    }
    options.logger.error(
      { err: error, method: request.method, path: request.path },
      'management request failed',
    );
    sendFailure(response, {
      reason: agentReasons.Internal,
      code: agentReasons.Internal,
      message: `The agent failed unexpectedly: ${describeError(error)}`,
    });
  };
}
