/**
 * The HTTPS listener of the webhook: TLS 1.2 or newer from a serving-certificate source,
 * switched in place when the source reports a new pair (connections keep working).
 */
import { createServer } from 'node:https';
import type { RequestListener } from 'node:http';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import type { ServingCertificateSource } from './serving-certificate.ts';

export interface ListenOptions {
  /** @default '0.0.0.0' */
  readonly host?: string;
  /** 0 picks a free port. @default 9443 */
  readonly port?: number;
  readonly certificates: ServingCertificateSource;
}

export interface WebhookServer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

/** A request must arrive completely within this time. @default 10 s */
export const requestTimeoutMs = 10_000;

export async function listenHttps(
  handler: RequestListener,
  options: ListenOptions,
): Promise<WebhookServer> {
  const { cert, key } = options.certificates.current();
  const server = createServer({ cert, key, minVersion: 'TLSv1.2' }, handler);
  server.requestTimeout = requestTimeoutMs;
  server.headersTimeout = requestTimeoutMs;
  const unsubscribe = options.certificates.subscribe((next) => {
    server.setSecureContext({ cert: next.cert, key: next.key, minVersion: 'TLSv1.2' });
  });
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => {
      unsubscribe();
      reject(
        new HapticError(
          errorCodes.WEBHOOK_LISTEN_FAILED,
          `The webhook cannot listen on ${host}:${options.port ?? 9443} (${describeError(error)}); choose a free address with --listen.`,
          { cause: error },
        ),
      );
    });
    server.listen(options.port ?? 9443, host, () => {
      resolve();
    });
  });
  const address = server.address();
  return {
    host,
    port: typeof address === 'object' && address !== null ? address.port : (options.port ?? 9443),
    close: () =>
      new Promise<void>((resolve) => {
        unsubscribe();
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
