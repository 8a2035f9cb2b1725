/**
 * The HTTPS listener of the webhook: TLS 1.2 or newer from a serving-certificate source,
 * switched in place when the source reports a new pair (connections keep working). When the
 * source carries a client CA, every caller must present a certificate it signed: a caller
 * without one is refused in the handshake, before a byte of HTTP is read.
 */
import { createServer } from 'node:https';
import type { RequestListener } from 'node:http';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import type { SecureContextOptions } from 'node:tls';
import type { ServingCertificate, ServingCertificateSource } from './serving-certificate.ts';

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

function secureContext({ cert, key, clientCa }: ServingCertificate): SecureContextOptions {
  return { cert, key, minVersion: 'TLSv1.2', ...(clientCa === undefined ? {} : { ca: clientCa }) };
}

export async function listenHttps(
  handler: RequestListener,
  options: ListenOptions,
): Promise<WebhookServer> {
  const first = options.certificates.current();
  // Whether callers must authenticate is fixed at start (the CA directory is a flag); the CAs
  // themselves follow the source like the pair.
  const clientAuth = first.clientCa !== undefined;
  const server = createServer(
    { ...secureContext(first), requestCert: clientAuth, rejectUnauthorized: clientAuth },
    handler,
  );
  server.requestTimeout = requestTimeoutMs;
  server.headersTimeout = requestTimeoutMs;
  const unsubscribe = options.certificates.subscribe((next) => {
    server.setSecureContext(secureContext(next));
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
