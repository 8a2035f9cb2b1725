/**
 * `haptic agent`: the management API beside HAProxy (mTLS, or legacy Basic authentication),
 * the local health/state socket, and the apply pipeline. Material changes take effect
 * without a restart: new handshakes get the new identity and anchors (including when a
 * previous-CA deadline passes), and every request is checked against the trust in force.
 *
 * The parts start in this order and stop in reverse (src/lifecycle): the base directory,
 * the apply service with the last applied state, the TLS material (mTLS only), then the
 * management API and the local socket, which stop together within the grace period.
 */
import { chmod, rm } from 'node:fs/promises';
import { type Server as HttpServer, createServer as createHttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Server as NetServer } from 'node:net';
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { describeError } from '../errors.ts';
import { Lifecycle } from '../lifecycle/lifecycle.ts';
import { type TlsMaterialWatcher, openTlsMaterial } from '../tls/material-watcher.ts';
import { materialStatusAt } from '../tls/tls-material.ts';
import type { AgentOptions } from './agent-options.ts';
import { claimSocketPath, loadState, prepareFiles, startFailed } from './agent-startup.ts';
import type { AgentStateBody } from '../agent-api/api-types.ts';
import { ApplyService } from './apply-service.ts';
import { ConfigFileStore } from './file-store.ts';
import { readProcessList } from './haproxy-reload.ts';
import { type LocalApiOptions, localApi } from './local-api.ts';
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

/** How callers prove who they are, and what the state report says of TLS. */
interface Transport {
  readonly authenticate: Authenticate;
  readonly tls: () => StateSources['tls'];
  /** The mounted identity and trust (mTLS only). */
  readonly material?: TlsMaterialWatcher;
}

/** The management API and the local socket, which stop together. */
interface Servers {
  readonly port: number;
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
  const lifecycle = new Lifecycle();
  const store = new ConfigFileStore(options.baseDir);
  const master = new MasterSocket(options.masterSocket);
  await lifecycle.start({
    name: 'base directory',
    start: () => prepareFiles(options, store, master, logger),
  });
  const applyService = await lifecycle.open(
    'apply service',
    async () =>
      new ApplyService({
        store,
        master,
        stateFile: options.stateFile,
        initialState: await loadState(options, store, logger),
        logger,
        checkSocket: options.checkSocket,
        reloadTimeoutMs: options.reloadTimeoutMs,
      }),
  );
  const transport = await startTransport(lifecycle, options, logger);
  const state = async (): Promise<AgentStateBody> =>
    stateReport({
      applied: applyService.state(),
      processes: await readProcessList(master),
      tls: transport.tls(),
      now: new Date(),
    });
  const app = managementApi({
    authenticate: transport.authenticate,
    applyService,
    state,
    limits: options.limits,
    logger,
  });
  const local = { state, summary: summaryOf(applyService, transport.material) };
  const servers = await lifecycle.open(
    'servers',
    () => serve(app, local, transport.material, options, logger),
    { close: (opened) => opened.close() },
  );
  logger.info(
    {
      port: servers.port,
      mode: options.transport.mode,
      baseDir: options.baseDir,
      masterSocket: options.masterSocket,
      localSocket: options.localSocket,
    },
    'agent started',
  );
  return {
    port: servers.port,
    async close() {
      await lifecycle.stop();
      logger.info('agent stopped');
    },
  };
}

/** The mounted identity and trust with their authenticator (mTLS), or Basic authentication. */
async function startTransport(
  lifecycle: Lifecycle,
  options: AgentOptions,
  logger: Logger,
): Promise<Transport> {
  const { transport } = options;
  if (transport.mode === 'legacy-basic-auth') {
    return {
      authenticate: basicAuthenticator(transport),
      tls: () => ({ mode: 'legacy-basic-auth' }),
    };
  }
  const material = await openTlsMaterial(lifecycle, {
    dir: transport.tlsDir,
    logger,
    ...(transport.pollIntervalMs === undefined ? {} : { pollIntervalMs: transport.pollIntervalMs }),
  });
  return {
    authenticate: mutualTlsAuthenticator({ material, clientName: transport.clientName }),
    tls: () => ({
      mode: 'mtls',
      snapshot: material.current(),
      clientName: transport.clientName,
      counters: material.counters(),
    }),
    material,
  };
}

/** What `haptic agent health` prints: the applied generation and whether the material is valid. */
function summaryOf(
  applyService: ApplyService,
  material: TlsMaterialWatcher | undefined,
): LocalApiOptions['summary'] {
  return () => {
    const snapshot = material?.current();
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
  };
}

/**
 * The management API on `--listen`, then the local socket; closing stops both from accepting
 * at once and gives in-flight requests the grace period before their connections are cut.
 */
async function serve(
  app: RequestListener,
  localOptions: LocalApiOptions,
  material: TlsMaterialWatcher | undefined,
  options: AgentOptions,
  logger: Logger,
): Promise<Servers> {
  const management = await serveManagementApi(app, material, options, logger);
  let local: HttpServer;
  try {
    local = await serveLocalSocket(localOptions, options.localSocket);
  } catch (error) {
    management.tlsServer?.stop();
    await closeWithin([management.server], 0);
    throw error;
  }
  return {
    port: management.port,
    close: async () => {
      management.tlsServer?.stop();
      await closeWithin([management.server, local], options.shutdownGraceMs);
      await rm(options.localSocket, { force: true });
    },
  };
}

async function serveManagementApi(
  app: RequestListener,
  material: TlsMaterialWatcher | undefined,
  options: AgentOptions,
  logger: Logger,
): Promise<{ server: HttpServer | HttpsServer; tlsServer?: MutualTlsServer; port: number }> {
  let server: HttpServer | HttpsServer;
  let tlsServer: MutualTlsServer | undefined;
  if (material === undefined) {
    server = createHttpServer(app);
    logger.warn('legacy mode: the management API uses plain HTTP with Basic authentication');
  } else {
    tlsServer = createMutualTlsServer(app, material, logger);
    server = tlsServer.server;
  }
  // Longer than any client keeps an idle connection, so the client always closes first.
  server.keepAliveTimeout = 120_000;
  server.requestTimeout = options.reloadTimeoutMs * 2 + 60_000;
  await listen(
    server,
    {
      ...(options.listen.host === undefined ? {} : { host: options.listen.host }),
      port: options.listen.port,
    },
    `port ${options.listen.port}`,
  ).catch((error: unknown) => {
    tlsServer?.stop();
    throw error;
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.listen.port;
  return { server, ...(tlsServer === undefined ? {} : { tlsServer }), port };
}

/** The local health and state socket, owner-only. */
async function serveLocalSocket(localOptions: LocalApiOptions, path: string): Promise<HttpServer> {
  await claimSocketPath(path);
  const local = createHttpServer(localApi(localOptions));
  await listen(local, path, path);
  await chmod(path, 0o600).catch(async (error: unknown) => {
    await closeWithin([local], 0);
    throw error;
  });
  return local;
}

/** Stops accepting, closes idle connections, and cuts the rest after `graceMs`. */
async function closeWithin(
  servers: readonly (HttpServer | HttpsServer)[],
  graceMs: number,
): Promise<void> {
  const closed = Promise.all(
    servers.map((server) => new Promise((resolve) => server.close(resolve))),
  );
  for (const server of servers) server.closeIdleConnections();
  const grace = setTimeout(() => {
    for (const server of servers) server.closeAllConnections();
  }, graceMs);
  await closed;
  clearTimeout(grace);
}
