// make cluster-up: the real single-node cluster with the product image imported
// (dev/lib/local-node.ts), left running until make cluster-down, owned by a detached keeper
// (dev/lib/node/node-keeper.ts). Its directory is $HAPTIC_NODE_DIR (default
// /var/lib/haptic-node), renewed on every start.
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { nodeRunning } from './lib/node/node-host.ts';

const nodeDir = process.env.HAPTIC_NODE_DIR ?? '/var/lib/haptic-node';
if (nodeRunning()) {
  process.stderr.write('A node is already running on this machine (make cluster-down stops it).\n');
  process.exit(1);
}
rmSync(nodeDir, { recursive: true, force: true });
mkdirSync(join(nodeDir, 'logs'), { recursive: true });
const keeper = spawn(
  process.execPath,
  [join(import.meta.dirname, 'lib/node/node-keeper.ts'), nodeDir],
  { detached: true, stdio: ['ignore', 'pipe', openSync(join(nodeDir, 'logs', 'keeper.log'), 'a')] },
);
const { stdout } = keeper;
if (stdout === null) throw new Error('the keeper has no stdout pipe');
let report = '';
for await (const line of createInterface({ input: stdout })) {
  report = line;
  break;
}
stdout.destroy();
keeper.unref();
const [status = '', detail = '""'] = report.split(/ (.*)/s);
if (status !== 'ready') {
  const reason = status === 'failed' ? (JSON.parse(detail) as string) : 'the keeper exited';
  process.stderr.write(
    `The node did not start: ${reason}\nLogs: ${join(nodeDir, 'logs')}, ${join(nodeDir, 'node', 'logs')}\n`,
  );
  process.exit(1);
}
const ready = JSON.parse(detail) as {
  kubeconfig: string;
  server: string;
  image: string;
  timings: { nodeReady: number };
};
process.stdout.write(
  `node Ready in ${(ready.timings.nodeReady / 1000).toFixed(1)} s at ${ready.server}; ${ready.image} imported\n` +
    `  export KUBECONFIG=${ready.kubeconfig}\n` +
    `  logs: ${join(nodeDir, 'node', 'logs')}; stop it with make cluster-down\n`,
);
process.exit(0);
