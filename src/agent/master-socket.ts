/**
 * HAProxy's master CLI over its Unix socket (`haproxy -W -S <path>`). One connection per
 * command: send the command, half-close, read until HAProxy closes.
 */
import { createConnection } from 'node:net';
import { HapticError, describeError, errorCodes } from '../errors.ts';

/** Largest answer read from the master CLI. */
const maxAnswerBytes = 16 * 1024 * 1024;

export class MasterSocket {
  readonly path: string;
  readonly #timeoutMs: number;

  /** @param timeoutMs per command. @default 10 seconds */
  constructor(path: string, timeoutMs = 10_000) {
    this.path = path;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Sends one command (`show proc`, `reload`, `@!<pid> show backend`) and returns the answer.
   * Throws `AGENT_HAPROXY_UNAVAILABLE` when the socket cannot be reached in time.
   */
  async command(command: string): Promise<string> {
    return this.commands([command]);
  }

  /**
   * Sends several commands on one line (`;`-separated, answered in order) and returns the
   * answers together. Each command is checked as `command` checks one.
   */
  async commands(commands: readonly string[]): Promise<string> {
    const bad = commands.find((command) => /[\n\r;]/.test(command));
    if (bad !== undefined) {
      throw new Error(`Refusing to send a master CLI command with a line break or ";": ${bad}`);
    }
    const command = commands.join('; ');
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const socket = createConnection(this.path);
      const fail = (message: string, cause?: unknown): void => {
        socket.destroy();
        reject(
          new HapticError(
            errorCodes.AGENT_HAPROXY_UNAVAILABLE,
            `HAProxy's master socket ${this.path} ${message}; check that HAProxy runs with -W -S ${this.path}.`,
            cause === undefined ? undefined : { cause },
          ),
        );
      };
      socket.setTimeout(this.#timeoutMs, () => {
        fail(`did not answer "${command}" within ${this.#timeoutMs} ms`);
      });
      socket.on('connect', () => {
        socket.end(`${command}\n`);
      });
      socket.on('data', (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > maxAnswerBytes)
          fail(`answered "${command}" with more than ${maxAnswerBytes} bytes`);
        else chunks.push(chunk);
      });
      socket.on('error', (error) => {
        fail(`cannot be used (${describeError(error)})`, error);
      });
      socket.on('close', () => {
        resolve(Buffer.concat(chunks).toString('utf8'));
      });
    });
  }
}
