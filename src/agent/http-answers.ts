/** Sending the agent's JSON answers. */
import type { Response } from 'express';
import { type AgentFailure, errorBodyOf, reasonStatus } from '../agent-api/reasons.ts';

/** Sends an error answer with the status of its reason. */
export function sendFailure(response: Response, failure: AgentFailure, close = false): void {
  // After an authentication failure the connection is closed, so the client's next attempt
  // starts with a fresh handshake (new identity or trust) instead of reusing this one.
  if (close) response.set('Connection', 'close');
  response.status(reasonStatus[failure.reason]).json(errorBodyOf(failure));
}

/** A body-parser error (`entity.too.large`, `entity.parse.failed`, ...). */
export function bodyParserErrorType(error: unknown): string | undefined {
  return typeof error === 'object' &&
    error !== null &&
    'type' in error &&
    typeof error.type === 'string'
    ? error.type
    : undefined;
}
