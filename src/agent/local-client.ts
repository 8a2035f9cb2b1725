/** `haptic agent health` and `haptic agent state`: GET on the agent's local Unix socket. */
import { request } from 'node:http';
import { HapticError, describeError, errorCodes } from '../errors.ts';

export interface LocalAnswer {
  readonly status: number;
  readonly body: string;
}

/** GETs `path` on the socket; throws `AGENT_CALL_FAILED` when the agent does not answer in time. */
export async function getLocal(
  socketPath: string,
  path: string,
  timeoutMs: number,
): Promise<LocalAnswer> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string, cause?: unknown): void => {
      reject(
        new HapticError(
          errorCodes.AGENT_CALL_FAILED,
          `The agent's local socket ${socketPath} ${reason}.`,
          cause === undefined ? undefined : { cause },
        ),
      );
    };
    const call = request({ socketPath, path, method: 'GET', timeout: timeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
      response.on('error', (error) => {
        fail(`broke off its answer (${describeError(error)})`, error);
      });
    });
    call.on('timeout', () => {
      call.destroy();
      fail(`did not answer within ${timeoutMs} ms`);
    });
    call.on('error', (error) => {
      fail(`cannot be reached (${describeError(error)})`, error);
    });
    call.end();
  });
}
