/**
 * `haptic agent`: the management API beside HAProxy (mTLS, or legacy Basic authentication),
 * the local health/state socket, and the apply pipeline. Material changes take effect
 * without a restart: new handshakes get the new identity and anchors (including when a
 * previous-CA deadline passes), and every request is checked against the trust in force.
 */
import { chmod, rm } from 'node:fs/promises';
import { type Server as HttpServer, createServer as createHttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Server as NetServer } from 'node:net';
import type { Logger } from 'pino';
import { describeError } from '../errors.ts';
import { TlsMaterialWatcher } from '../tls/material-watcher.ts';
import { materialStatusAt } from '../tls/tls-material.ts';
import type { AgentOptions } from './agent-options.ts';
import { claimSocketPath, loadState, prepareFiles, startFailed } from './agent-startup.ts';
import type { AgentStateBody } from '../agent-api/api-types.ts';
import { ApplyService } from './apply-service.ts';
import { ConfigFileStore } from './file-store.ts';
import { readProcessList } from './haproxy-reload.ts';
import { localApi } from './local-api.ts';
import { managementApi } from './management-api.ts';
import { MasterSocket } from './master-socket.ts';
import { type Authenticate, basicAuthenticator, mutualTlsAuthenticator } from './peer-auth.ts';
import { type StateSources, stateReport } from './state-report.ts';
import { type MutualTlsServer, createMutualTlsServer } from './tls-server.ts';

export interface RunningAgent {
  /** The management API's port (useful when `--listen` asked for port 0). */
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish within the grace period, then closes. */
  close(): Promise<void>;
}

async function listen(
  server: NetServer,
  address: string | { host?: string; port: number },
  what: string,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      reject(startFailed(`The agent cannot listen on ${what}: ${describeError(error)}.`, error));
    };
    server.once('error', onError);
    const done = (): void => {
      server.off('error', onError);
      resolve();
    };
    if (typeof address === 'string') server.listen(address, done);
    else server.listen(address.port, address.host, done);
  });
}

export async function startAgent(options: AgentOptions, logger: Logger): Promise<RunningAgent> {
  const store = new ConfigFileStore(options.baseDir);
  const master = new MasterSocket(options.masterSocket);
  await prepareFiles(options, store, master, logger);
  const applyService = new ApplyService({
    store,
    master,
    stateFile: options.stateFile,
    initialState: await loadState(options, store, logger),
    logger,
    checkSocket: options.checkSocket,
    reloadTimeoutMs: options.reloadTimeoutMs,
  });

  const { transport } = options;
  let watcher: TlsMaterialWatcher | undefined;
  let authenticate: Authenticate;
  let tlsSource: () => StateSources['tls'];
  if (transport.mode === 'mtls') {
    const mounted = await TlsMaterialWatcher.start({
      dir: transport.tlsDir,
      logger,
      ...(transport.pollIntervalMs === undefined
        ? {}
        : { pollIntervalMs: transport.pollIntervalMs }),
    });
    watcher = mounted;
    authenticate = mutualTlsAuthenticator({ material: mounted, clientName: transport.clientName });
    tlsSource = () => ({
      mode: 'mtls',
      snapshot: mounted.current(),
      clientName: transport.clientName,
      counters: mounted.counters(),
    });
  } else {
    authenticate = basicAuthenticator(transport);
    tlsSource = () => ({ mode: 'legacy-basic-auth' });
  }
  const state = async (): Promise<AgentStateBody> =>
    stateReport({
      applied: applyService.state(),
      processes: await readProcessList(master),
      tls: tlsSource(),
      now: new Date(),
    });
  const app = managementApi({ authenticate, applyService, state, limits: options.limits, logger });

  let management: HttpServer | HttpsServer;
  let tlsServer: MutualTlsServer | undefined;
  if (watcher === undefined) {
    management = createHttpServer(app);
    logger.warn('legacy mode: the management API uses plain HTTP with Basic authentication');
  } else {
    tlsServer = createMutualTlsServer(app, watcher, logger);
    management = tlsServer.server;
  }
  // Longer than any client keeps an idle connection, so the client always closes first.
  management.keepAliveTimeout = 120_000;
  management.requestTimeout = options.reloadTimeoutMs * 2 + 60_000;
  await listen(
    management,
    {
      ...(options.listen.host === undefined ? {} : { host: options.listen.host }),
      port: options.listen.port,
    },
    `port ${options.listen.port}`,
  );
  const address = management.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.listen.port;

  await claimSocketPath(options.localSocket);
  const local = createHttpServer(
    localApi({
      state,
      summary: () => {
        const snapshot = watcher?.current();
        const status =
          snapshot === undefined
            ? undefined
            : materialStatusAt(snapshot.decoding, new Date(), snapshot.dir);
        return {
          generation: applyService.state().generation,
          tls:
            status === undefined
              ? 'legacy-basic-auth'
              : status.ok
                ? 'valid'
                : `invalid: ${status.reason}`,
        };
      },
    }),
  );
  await listen(local, options.localSocket, options.localSocket);
  await chmod(options.localSocket, 0o600);
  logger.info(
    {
      port,
      mode: transport.mode,
      baseDir: options.baseDir,
      masterSocket: options.masterSocket,
      localSocket: options.localSocket,
    },
    'agent started',
  );

  return {
    port,
    async close() {
      tlsServer?.stop();
      watcher?.close();
      const closed = Promise.all([
        new Promise((resolve) => management.close(resolve)),
        new Promise((resolve) => local.close(resolve)),
      ]);
      management.closeIdleConnections();
      local.closeIdleConnections();
      const grace = setTimeout(() => {
        management.closeAllConnections();
        local.closeAllConnections();
      }, options.shutdownGraceMs);
      await closed;
      clearTimeout(grace);
      await rm(options.localSocket, { force: true });
      logger.info('agent stopped');
    },
  };
}
