// The owner of a node started by `make cluster-up` (dev/lib/local-node.ts): a detached process that starts the node
// (every part dies with it), reports on stdout, then keeps it until SIGTERM (make node-down).
// When a part of the node exits on its own, it logs why and takes the whole node down, so a
// broken node is never left half running.
// Usage: node dev/lib/node/node-keeper.ts <dir>
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keeperPidFile } from './node-host.ts';
import { startLocalNode } from '../local-node.ts';

const [dir] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: node-keeper.ts <dir>');
const log = (line: string): void => {
  appendFileSync(join(dir, 'logs', 'keeper.log'), `${new Date().toISOString()} ${line}\n`);
};

let node;
try {
  node = await startLocalNode(dir, process.pid);
} catch (error) {
  process.stdout.write(
    `failed ${JSON.stringify(error instanceof Error ? error.message : String(error))}\n`,
  );
  process.exit(1);
}
const running = node;
writeFileSync(keeperPidFile, `${String(process.pid)}\n`);
log(`node ready in ${String(running.node.timings.nodeReady)} ms`);
process.stdout.write(
  `ready ${JSON.stringify({ kubeconfig: running.kubeconfigPath, server: running.node.server, image: running.image, timings: running.node.timings })}\n`,
);

const stop = async (code: number): Promise<never> => {
  const started = performance.now();
  await running.stop();
  log(`node stopped; clean-up took ${String(Math.round(performance.now() - started))} ms`);
  process.exit(code);
};
process.once('SIGTERM', () => void stop(0));
process.once('SIGINT', () => void stop(0));
running.node.guard(new Promise<never>(() => undefined)).catch((error: unknown) => {
  log(error instanceof Error ? error.message : String(error));
  void stop(1);
});
