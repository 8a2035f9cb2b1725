/**
 * The controller's and the agent's side of the check sandbox: `haproxy -c` on a complete set
 * of files, for HAProxy's own message. The configuration is hostile input (linted before this
 * runs), so HAProxy never parses it in the caller's process: the files go, in the agents' apply
 * format, in one `POST /v1/check` to the sandbox's Unix socket (`haptic sandbox serve`, the
 * `config-check` container beside the caller), which holds nothing worth stealing, runs the
 * check under time and memory limits and reduces HAProxy's output before it reaches status,
 * Events, logs or answers. A refused request (a path or size the agents would refuse as well)
 * is a rejection of the files; a sandbox that cannot be reached, answers late or fails is
 * `unavailable`, so nothing remembers it.
 */
import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import type { ApplyFile } from '../agent-api/apply-encoding.ts';
import { describeError } from '../errors.ts';
import type { CheckLane } from './check-gate.ts';
import { encodeCheckRequest } from './kept-contents.ts';
import { type CheckOutcome, contentUnknownStatus, sandboxPaths } from './sandbox-protocol.ts';
import { isRecord } from '../is-record.ts';

/**
 * node:http's request, loaded at the first call. Not `import … from 'node:http'`: a module
 * import reads every export, and its WebSocket getters load Node's bundled undici (about 45 ms
 * of preflight's start-up, which loads this module for the template lint); and not when this
 * module loads: node:http alone takes 4-6 ms, and the template lint never checks.
 */
function request(
  options: RequestOptions,
  callback: (response: IncomingMessage) => void,
): ClientRequest {
  return process.getBuiltinModule('node:http').request(options, callback);
}

/** A file of the set: a path relative to the base directory and its bytes. */
export type CheckFile = ApplyFile;

export interface CheckOptions {
  /** The sandbox's socket (`--check-socket`). */
  readonly socket: string;
  /** Longest wait for the answer (the sandbox's own time limit applies inside). @default 60 s */
  readonly timeoutMs?: number;
  /**
   * The sandbox's queue the check waits in: an admission review's, or delivery's.
   * @default 'delivery'
   */
  readonly lane?: CheckLane;
  /**
   * Aborted when no one waits for the answer any more (a review answered or given up): the
   * connection is closed, and the sandbox drops or kills the check.
   */
  readonly signal?: AbortSignal;
}

/** Largest answer read from the sandbox. */
const maxAnswerBytes = 1024 * 1024;

/** The answer's outcome, or a sentence on what is wrong with it. */
function outcomeOf(status: number, text: string): CheckOutcome | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `answered ${status} with a body that is not JSON`;
  }
  if (!isRecord(body)) return `answered ${status} with a body that is not an object`;
  if (status === 200) {
    if (body.ok === true) return { ok: true };
    const { failure, message, exhausted } = body;
    if (
      body.ok === false &&
      (failure === 'rejected' || failure === 'unavailable') &&
      typeof message === 'string'
    ) {
      return { ok: false, failure, message, ...(exhausted === 'memory' ? { exhausted } : {}) };
    }
    return 'answered 200 without an outcome';
  }
  const error = isRecord(body.error) ? body.error : {};
  const message = typeof error.message === 'string' ? error.message : `status ${status}`;
  // 4xx: the files break the rules every agent applies; 5xx: the sandbox failed.
  return status >= 400 && status < 500
    ? { ok: false, failure: 'rejected', message: `The files cannot be checked: ${message}` }
    : `failed: ${message}`;
}

/** Digests of the files in the last request each sandbox (by socket) took. */
const heldBySocket = new Map<string, ReadonlySet<string>>();

type Answer =
  | { readonly status: number; readonly text: string }
  /** What went wrong, for "The check sandbox at … <sentence>". */
  | string;

function post(
  socket: string,
  body: Buffer,
  timeoutMs: number,
  options: Pick<CheckOptions, 'lane' | 'signal'>,
): Promise<Answer> {
  return new Promise((resolve) => {
    const { signal } = options;
    let settled = false;
    const onAbort = (): void => {
      // Closing the connection is what tells the sandbox the check is no longer wanted.
      call.destroy();
      settle('was left: no one waits for the answer any more');
    };
    const settle = (answer: Answer): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      resolve(answer);
    };
    const call = request(
      {
        socketPath: socket,
        path: `${sandboxPaths.check}?lane=${options.lane ?? 'delivery'}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.byteLength },
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size > maxAnswerBytes) {
            call.destroy();
            settle(`answered with more than ${maxAnswerBytes} bytes`);
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          settle({
            status: response.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
        response.on('error', (error) => {
          settle(`broke off its answer (${describeError(error)})`);
        });
      },
    );
    call.on('timeout', () => {
      call.destroy();
      settle(`did not answer within ${timeoutMs} ms`);
    });
    call.on('error', (error) => {
      settle(
        `cannot be reached (${describeError(error)}); the config-check container (haptic sandbox serve) must run beside this one`,
      );
    });
    if (signal?.aborted === true) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    call.end(body);
  });
}

/**
 * Checks the complete set of files (haproxy.cfg and every file it names) in the sandbox. The
 * contents the sandbox took with the last request are named by digest alone
 * (kept-contents.ts); when it no longer holds them, the set goes again with every content.
 */
export async function checkHAProxyConfig(
  files: readonly CheckFile[],
  options: CheckOptions,
): Promise<CheckOutcome> {
  const deadline = performance.now() + (options.timeoutMs ?? 60_000);
  const { socket } = options;
  let held = heldBySocket.get(socket) ?? new Set<string>();
  for (;;) {
    const request = encodeCheckRequest(files, held);
    const answer = await post(
      socket,
      request.body,
      Math.max(1, Math.ceil(deadline - performance.now())),
      options,
    );
    if (typeof answer === 'string') {
      return {
        ok: false,
        failure: 'unavailable',
        message: `The check sandbox at ${socket} ${answer}.`,
      };
    }
    if (answer.status === contentUnknownStatus && held.size > 0) {
      heldBySocket.delete(socket);
      held = new Set();
      continue;
    }
    if (answer.status === 200) heldBySocket.set(socket, request.digests);
    const outcome = outcomeOf(answer.status, answer.text);
    return typeof outcome === 'string'
      ? {
          ok: false,
          failure: 'unavailable',
          message: `The check sandbox at ${socket} ${outcome}.`,
        }
      : outcome;
  }
}

/** Undefined when the sandbox answers its health check in time; otherwise what went wrong. */
export function probeSandbox(socket: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const call = request(
      { socketPath: socket, path: sandboxPaths.health, method: 'GET', timeout: timeoutMs },
      (response) => {
        response.resume();
        response.on('end', () => {
          resolve(
            response.statusCode === 200
              ? undefined
              : `The check sandbox at ${socket} answered ${response.statusCode ?? 0}.`,
          );
        });
      },
    );
    call.on('timeout', () => {
      call.destroy();
      resolve(`The check sandbox at ${socket} did not answer within ${timeoutMs} ms.`);
    });
    call.on('error', (error) => {
      resolve(`The check sandbox at ${socket} cannot be reached (${describeError(error)}).`);
    });
    call.end();
  });
}
