/**
 * The local Unix socket: health and state only, no authentication (file permissions guard
 * it), never any change. Health answers 200 while the agent process works, whatever the state
 * of its certificates, so a liveness probe never restarts an agent that waits for repaired
 * certificates.
 */
import express, { type Request, type Response } from 'express';
import type { AgentStateBody } from '../agent-api/api-types.ts';
import { agentPaths } from '../agent-api/api-types.ts';
import { sendFailure } from './http-answers.ts';
import { agentReasons } from '../agent-api/reasons.ts';

export interface LocalApiOptions {
  readonly state: () => Promise<AgentStateBody>;
  /** One line on the agent's condition, for the health answer (informational). */
  readonly summary: () => Record<string, unknown>;
}

export function localApi(options: LocalApiOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get(agentPaths.health, (_request: Request, response: Response) => {
    response.json({ status: 'ok', ...options.summary() });
  });
  app.get(agentPaths.state, async (_request: Request, response: Response) => {
    response.json(await options.state());
  });
  app.use((request: Request, response: Response) => {
    sendFailure(response, {
      reason: agentReasons.NotFound,
      code: agentReasons.NotFound,
      message: `${request.method} ${request.path} does not exist on the local socket; use GET ${agentPaths.health} or GET ${agentPaths.state}.`,
    });
  });
  return app;
}
