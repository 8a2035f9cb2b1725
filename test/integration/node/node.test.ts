/**
 * A real single-node cluster on this machine (dev/lib/node): kubelet, containerd, kube-proxy,
 * the controllers and the scheduler run Pods, Deployments, Jobs and Services for real, and
 * the node leaves nothing behind, after stop() and after its owner is SIGKILLed. One node runs
 * per machine, so this file runs in the vitest project `node`, after (never beside) the
 * `integration` project, whose global setup starts the node the other tests share.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busyboxBinary } from '../../../dev/lib/node/node-images.ts';
import { nodeNetns } from '../../../dev/lib/node/node-network.ts';
import { pinnedToolBin } from '../../../dev/lib/tools.ts';
import { startNode, type RealNode } from '../../../dev/lib/node/start-node.ts';
import { nodeLeftovers, traceNode, type NodeTrace } from './node-traces.ts';

interface Result {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function kubectl(kubeconfig: string, args: readonly string[], input = ''): Promise<Result> {
  const result = await execa(pinnedToolBin('kubectl'), args, {
    env: { KUBECONFIG: kubeconfig },
    reject: false,
    input,
    timeout: 90_000,
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}

const busybox = (name: string, command: string): Record<string, unknown> => ({
  name,
  image: 'haptic.local/busybox:static',
  imagePullPolicy: 'Never',
  command: ['sh', '-c', command],
});

/** An HTTP server answering `hello from <pod name>` on :8080. */
const webServer = busybox(
  'web',
  'mkdir -p /tmp/www && echo "hello from $(hostname)" > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www',
);

/** Measurements, printed at the end of the file. */
const measured: Record<string, string> = {};
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
afterAll(() => {
  const report = Object.entries(measured).map(([what, value]) => `${what} ${value}`);
  process.stdout.write(`real node: ${report.join(', ')}\n`);
});

describe('a real node', () => {
  const dir = mkdtempSync(join(tmpdir(), 'haptic-node-'));
  let node: RealNode;
  let trace: NodeTrace;
  const k = (args: readonly string[], input?: string): Promise<Result> =>
    node.guard(kubectl(node.kubeconfigPath, args, input));
  const apply = async (object: unknown): Promise<void> => {
    const result = await k(['apply', '-f', '-'], JSON.stringify(object));
    expect(result.stderr).toBe('');
  };

  beforeAll(async () => {
    node = await startNode({ dir });
    trace = traceNode(node.anchorPid, dir);
    measured['start to Ready'] = seconds(node.timings.nodeReady);
  });

  afterAll(async () => {
    // Undefined when the node could not start: beforeAll's error is the one to read.
    await (node as RealNode | undefined)?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers a Ready node with its InternalIP and a default ServiceAccount', async () => {
    const nodes = await k(['get', 'nodes', '-o', 'json']);
    const [entry] = (
      JSON.parse(nodes.stdout) as {
        items: Array<{
          metadata: { name: string };
          status: {
            conditions: Array<{ type: string; status: string }>;
            addresses: Array<{ type: string; address: string }>;
          };
        }>;
      }
    ).items;
    expect(entry?.metadata.name).toBe('haptic-node');
    expect(entry?.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', status: 'True' }),
    );
    expect(entry?.status.addresses).toContainEqual({
      type: 'InternalIP',
      address: '10.244.255.254',
    });
    expect((await k(['get', 'serviceaccount', 'default'])).exitCode).toBe(0);
    expect(node.timings.nodeReady).toBeLessThan(60_000);
  });

  it('runs a Pod from a locally imported image and execs into it', async () => {
    const started = performance.now();
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: { containers: [webServer] },
    });
    expect((await k(['wait', '--for=condition=Ready', 'pod/web', '--timeout=60s'])).exitCode).toBe(
      0,
    );
    measured['Pod start'] = seconds(performance.now() - started);
    const exec = await k(['exec', 'web', '--', 'cat', '/tmp/www/index.html']);
    expect(exec.stdout).toBe('hello from web');
    const pod = await k(['get', 'pod', 'web', '-o', 'jsonpath={.status.podIP}']);
    expect(pod.stdout).toMatch(/^10\.244\.254\.\d+$/);
  });

  it('rolls out a Deployment of two replicas', async () => {
    await apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'pair' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'pair' } },
        template: {
          metadata: { labels: { app: 'pair' } },
          spec: {
            containers: [
              {
                ...webServer,
                readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
              },
            ],
          },
        },
      },
    });
    const rollout = await k(['rollout', 'status', 'deployment/pair', '--timeout=60s']);
    expect(rollout.stdout).toContain('successfully rolled out');
    const ready = await k(['get', 'deployment', 'pair', '-o', 'jsonpath={.status.readyReplicas}']);
    expect(ready.stdout).toBe('2');
  });

  it('completes a Job whose output kubectl logs shows', async () => {
    await apply({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'greeting' },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [busybox('greet', 'echo "job ran on $(hostname)"; echo done')],
          },
        },
      },
    });
    const wait = await k(['wait', '--for=condition=Complete', 'job/greeting', '--timeout=60s']);
    expect(wait.exitCode).toBe(0);
    const logs = await k(['logs', 'job/greeting']);
    expect(logs.stdout).toMatch(/^job ran on greeting-\w+\ndone$/);
  });

  it('routes a Service ClusterIP to its Pods through kube-proxy, from a Pod and from the node', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'pair' },
      spec: { selector: { app: 'pair' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const ip = (await k(['get', 'service', 'pair', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
    expect(ip).toMatch(/^10\.96\./);
    // kube-proxy programs the rules a moment after the EndpointSlice appears.
    await expect
      .poll(
        async () =>
          (await k(['exec', 'web', '--', 'timeout', '2', 'wget', '-qO-', `http://${ip}/`])).stdout,
        {
          timeout: 20_000,
          interval: 250,
        },
      )
      .toMatch(/^hello from pair-/);
    // From the node's own network namespace (where the API server calls a webhook's
    // Service), kube-proxy spreads connections over both replicas.
    const answers = new Set<string>();
    const deadline = Date.now() + 20_000;
    while (answers.size < 2 && Date.now() < deadline) {
      const fromNode = spawnSync(
        'nsenter',
        [`--net=/run/netns/${nodeNetns}`, busyboxBinary, 'wget', '-qO-', `http://${ip}/`],
        { encoding: 'utf8', timeout: 5_000 },
      );
      answers.add(fromNode.stdout.trim());
    }
    expect([...answers].sort()).toEqual([
      expect.stringMatching(/^hello from pair-/),
      expect.stringMatching(/^hello from pair-/),
    ]);
    // And Pods reach the API server through the `kubernetes` Service.
    const api = await k(['exec', 'web', '--', 'nc', '-w', '3', '10.96.0.1', '443'], '');
    expect(api.exitCode).toBe(0);
  });

  it('refuses a ClusterIP without endpoints at once', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'nobody' },
      spec: { selector: { app: 'nobody' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const ip = (await k(['get', 'service', 'nobody', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
    const started = performance.now();
    const result = await k(['exec', 'web', '--', 'nc', '-w', '5', ip, '80'], '');
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('Connection refused');
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('refuses a second node on this machine, naming the one that runs', async () => {
    const other = mkdtempSync(join(tmpdir(), 'haptic-node-second-'));
    try {
      await expect(startNode({ dir: other })).rejects.toThrow(
        /The node cannot start: another node is running on this machine \(holder \d+\); stop it first/,
      );
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
    const ready = await k([
      'get',
      'node',
      'haptic-node',
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
    ]);
    expect(ready.stdout).toBe('True');
  });

  it('fails loudly, naming the part, when kubelet dies', async () => {
    const kubelet = node.processes.find((p) => p.name === 'kubelet');
    const pid = spawnSync('pgrep', ['-P', String(kubelet?.pid), '-x', 'kubelet'], {
      encoding: 'utf8',
    });
    process.kill(Number(pid.stdout.trim()), 'SIGKILL');
    const started = performance.now();
    await expect(node.guard(new Promise(() => undefined))).rejects.toThrow(
      /The node failed: kubelet exited/,
    );
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(node.failure()).toMatch(/kubelet\.log ends with/);
  });

  it('leaves nothing behind when stopped', async () => {
    expect(nodeLeftovers(trace).length).toBeGreaterThan(0);
    const started = performance.now();
    await node.stop();
    measured['stop clean-up'] = seconds(performance.now() - started);
    expect(nodeLeftovers(trace)).toEqual([]);
  });
});

describe('a real node whose owner is SIGKILLed', () => {
  it('leaves nothing behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'haptic-node-killed-'));
    const script = join(import.meta.dirname, '../../fixtures/start-node.ts');
    const owner = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const started = await new Promise<{ kubeconfig: string; anchor: number }>((resolve, reject) => {
      owner.stdout.once('data', (chunk: Buffer) => {
        resolve(JSON.parse(chunk.toString()) as { kubeconfig: string; anchor: number });
      });
      owner.once('exit', (code) => {
        reject(new Error(`start-node.ts exited with ${String(code)}`));
      });
    });
    const trace = traceNode(started.anchor, dir);
    try {
      // A running Pod: containers, a shim, mounts and a network namespace to clean up.
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web' },
        spec: { containers: [webServer] },
      };
      await kubectl(started.kubeconfig, ['apply', '-f', '-'], JSON.stringify(pod));
      const ready = await kubectl(started.kubeconfig, [
        'wait',
        '--for=condition=Ready',
        'pod/web',
        '--timeout=60s',
      ]);
      expect(ready.exitCode).toBe(0);
      const killed = performance.now();
      owner.kill('SIGKILL');
      await expect.poll(() => nodeLeftovers(trace), { timeout: 20_000, interval: 250 }).toEqual([]);
      measured['clean-up after owner SIGKILL'] = seconds(performance.now() - killed);
    } finally {
      owner.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
