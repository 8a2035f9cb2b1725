/**
 * A real OCI registry (CNCF distribution, `registry serve`, pinned in tools/registry) for the
 * charts and the images of the lifecycle suite, with a configuration file of its own.
 *
 * It runs in the node's network namespace, listening on every address there: containerd
 * (which runs in that namespace) pulls from `127.0.0.1:<port>`, a loopback registry, which
 * containerd speaks plain HTTP to without any registry configuration; helm, skopeo and
 * source-controller on this machine reach the same registry at the node's address.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { nodeAddress, nodeNetns } from '../lib/node/node-network.ts';
import { startSupervised, type SupervisedProcess } from '../lib/supervised-process.ts';
import { toolPath } from '../lib/tools.ts';

export interface OciRegistry {
  /** `host:port` as this machine reaches it (helm push, skopeo, source-controller). */
  readonly hostEndpoint: string;
  /** `host:port` as the node's containerd pulls from it (loopback in the node's namespace). */
  readonly nodeEndpoint: string;
  readonly process: SupervisedProcess;
}

/** The registry's port in the node's namespace (the node's own ports are 2379, 6443, 10250…). */
export const registryPort = 5000;

export function renderRegistryConfig(dataDir: string, port: number): string {
  return stringify({
    version: 0.1,
    log: { level: 'info', formatter: 'text' },
    storage: { filesystem: { rootdirectory: dataDir }, delete: { enabled: false } },
    http: {
      addr: `:${String(port)}`,
      secret: randomBytes(16).toString('hex'),
      headers: { 'X-Content-Type-Options': ['nosniff'] },
    },
    health: { storagedriver: { enabled: false } },
  });
}

export async function startOciRegistry(dir: string): Promise<OciRegistry> {
  mkdirSync(join(dir, 'data'), { recursive: true });
  const config = join(dir, 'config.yml');
  writeFileSync(config, renderRegistryConfig(join(dir, 'data'), registryPort));
  const logFile = join(dir, 'registry.log');
  const process = startSupervised({
    name: 'registry',
    command: 'nsenter',
    args: [`--net=/run/netns/${nodeNetns}`, '--', toolPath('registry'), 'serve', config],
    logFile,
    // No tracing exporter: nothing to send spans to.
    env: { PATH: globalThis.process.env.PATH ?? '', OTEL_TRACES_EXPORTER: 'none' },
  });
  const hostEndpoint = `${nodeAddress}:${String(registryPort)}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await fetch(`http://${hostEndpoint}/v2/`).catch(() => undefined);
    if (answer?.status === 200) break;
    const exited = await Promise.race([process.exited.then(() => true), sleep(200, false)]);
    if (exited || Date.now() > deadline) {
      await process.stop();
      const last = readFileSync(logFile, 'utf8').trim().split('\n').slice(-3).join(' | ');
      throw new Error(`The OCI registry did not answer on http://${hostEndpoint}/v2/: ${last}`);
    }
  }
  return { hostEndpoint, nodeEndpoint: `127.0.0.1:${String(registryPort)}`, process };
}
