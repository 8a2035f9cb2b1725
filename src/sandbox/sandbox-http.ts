/**
 * The check sandbox's HTTP plumbing: a request body read up to a limit, and JSON answers that
 * close their connection (one request per connection), errors in the agents' error body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AgentFailure,
  type AgentReason,
  errorBodyOf,
  reasonStatus,
} from '../agent-api/reasons.ts';

export function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    connection: 'close',
  });
  response.end(text);
}

/** Sends an error answer with the status of its reason. */
export function sendFailure(response: ServerResponse, failure: AgentFailure): void {
  send(response, reasonStatus[failure.reason], errorBodyOf(failure));
}

/** A failure whose code is its reason. */
export function failure(reason: AgentReason, message: string): AgentFailure {
  return { reason, code: reason, message };
}

/**
 * The body, or undefined when it is longer than `limit` bytes. A longer body is read to its
 * end and dropped, so the client gets the answer instead of a reset connection.
 */
export async function readBody(
  request: IncomingMessage,
  limit: number,
): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const bytes = chunk as Buffer;
    size += bytes.byteLength;
    if (size <= limit) chunks.push(bytes);
  }
  return size > limit ? undefined : Buffer.concat(chunks);
}

export function isJson(request: IncomingMessage): boolean {
  const type = request.headers['content-type'] ?? '';
  return /^application\/json\s*(;|$)/i.test(type);
}
