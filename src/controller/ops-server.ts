/**
 * The controller's operational endpoints, plain HTTP: `/healthz` and `/readyz` on the health
 * address (:8080), Prometheus `/metrics` on the metrics address (:9090). Nothing else.
 */
import { type Server, createServer } from 'node:http';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import type { ListenAddress } from '../net/listen-address.ts';
import type { ControllerMetrics } from './status/controller-metrics.ts';

export interface OpsServers {
  readonly healthPort: number;
  readonly metricsPort: number;
  close(): Promise<void>;
}

export interface OpsOptions {
  readonly health: ListenAddress;
  readonly metrics: ListenAddress;
  readonly registry: ControllerMetrics['registry'];
  /** Why the controller is not ready, or undefined when it is. */
  readonly notReady: () => string | undefined;
}

async function listen(server: Server, address: ListenAddress, what: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => {
      reject(
        new HapticError(
          errorCodes.USAGE_INVALID,
          `The ${what} endpoint cannot listen on ${address.host ?? ''}:${address.port} (${describeError(error)}); choose another address.`,
          { cause: error },
        ),
      );
    });
    server.listen(address.port, address.host, resolve);
  });
  const bound = server.address();
  return typeof bound === 'object' && bound !== null ? bound.port : address.port;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
    server.closeAllConnections();
  });
}

export async function startOpsServers(options: OpsOptions): Promise<OpsServers> {
  const health = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (req.method === 'GET' && path === '/readyz') {
      const problem = options.notReady();
      if (problem === undefined) res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      else res.writeHead(503, { 'content-type': 'text/plain' }).end(`${problem}\n`);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('serves /healthz and /readyz\n');
  });
  const metrics = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('serves /metrics\n');
      return;
    }
    options.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
      (error: unknown) => res.writeHead(500).end(describeError(error)),
    );
  });
  const healthPort = await listen(health, options.health, 'health');
  const metricsPort = await listen(metrics, options.metrics, 'metrics').catch(
    async (error: unknown) => {
      await close(health);
      throw error;
    },
  );
  return {
    healthPort,
    metricsPort,
    close: async () => {
      await Promise.all([close(health), close(metrics)]);
    },
  };
}
