/**
 * The HTTPS server of the management API in mTLS mode. TLS 1.3 only; every handshake asks
 * for a client certificate, which the request layer checks (peer-auth.ts) against the trust in
 * force at each request, so refusals carry a reason. The TLS context follows the mounted
 * material: re-installed on every change and when a previous-CA deadline passes.
 */
import type { RequestListener } from 'node:http';
import { type Server, createServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { describeError } from '../errors.ts';
import type { TlsMaterialSnapshot, TlsMaterialWatcher } from '../tls/material-watcher.ts';
import { secureContextOptions } from '../tls/secure-context.ts';
import { trustAt } from '../tls/tls-material.ts';

export interface MutualTlsServer {
  readonly server: Server;
  /** Stops following the material. */
  stop(): void;
}

function contextFor(snapshot: TlsMaterialSnapshot, now: Date) {
  const { decoding } = snapshot;
  return decoding.ok
    ? secureContextOptions(decoding.material, trustAt(decoding.material, now))
    : undefined;
}

export function createMutualTlsServer(
  app: RequestListener,
  watcher: TlsMaterialWatcher,
  logger: Logger,
): MutualTlsServer {
  const server = createServer(
    {
      ...(contextFor(watcher.current(), new Date()) ?? {}),
      requestCert: true,
      // Verified per request with a reason; see peer-auth.ts.
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
    },
    app,
  );
  let deadlineTimer: NodeJS.Timeout | undefined;
  const refresh = (): void => {
    clearTimeout(deadlineTimer);
    const now = new Date();
    const snapshot = watcher.current();
    const context = contextFor(snapshot, now);
    // Undecodable material leaves the last context in place: its handshakes only reach
    // requests that are refused with the material's problem as the reason.
    if (context !== undefined) server.setSecureContext(context);
    const until = snapshot.decoding.ok
      ? trustAt(snapshot.decoding.material, now).previousUntil
      : undefined;
    if (until !== undefined) {
      deadlineTimer = setTimeout(refresh, Math.max(until.getTime() - now.getTime(), 0) + 10);
      deadlineTimer.unref();
    }
  };
  refresh();
  const unsubscribe = watcher.onChange(refresh);
  server.on('tlsClientError', (error: Error, socket: TLSSocket) => {
    logger.warn(
      { remote: socket.remoteAddress, err: describeError(error) },
      'TLS handshake with a client failed',
    );
  });
  return {
    server,
    stop() {
      clearTimeout(deadlineTimer);
      unsubscribe();
    },
  };
}
