/** One HTTPS request with a given client identity, on a fresh connection or a given agent. */
import { type Agent, request } from 'node:https';

export interface RawAnswer {
  readonly status: number;
  readonly body: unknown;
  /** Whether the request went over a kept-alive connection. */
  readonly reusedSocket: boolean;
}

export interface RawRequest {
  readonly host: string;
  readonly port: number;
  readonly path?: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Client identity and trust, unless `agent` carries them. */
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly ca?: Buffer;
  readonly servername?: string;
  readonly agent?: Agent;
}

export async function rawRequest(options: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: options.host,
        port: options.port,
        path: options.path ?? '/v1/state',
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        servername: options.servername ?? 'haptic-agent',
        ...(options.agent === undefined
          ? { agent: false, cert: options.cert, key: options.key, ca: options.ca }
          : { agent: options.agent }),
        timeout: 10_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: response.statusCode ?? 0, body, reusedSocket: call.reusedSocket });
        });
      },
    );
    call.on('error', reject);
    call.on('timeout', () => call.destroy(new Error('timeout')));
    call.end(options.body);
  });
}
