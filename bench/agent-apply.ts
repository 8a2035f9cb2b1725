/**
 * The agent's numbers, on real HAProxy and real mTLS (the agent runs as `node src/cli/main.ts
 * agent`, HAProxy 2.6 in master-worker mode, both started and stopped here):
 *
 * 1. Apply latency of a 1,000-backend configuration (lint + sandboxed haproxy -c + stage + keep
 *    last-known-good + rename + reload + verify, as the agent reports it, and end to end through the controller's client)
 *    against a bare master-socket reload of the same configuration (`reload`, then `show proc`
 *    until a new worker runs, polled at the agent's interval). Runs are interleaved; every
 *    apply changes content so every apply reloads.
 * 1b. A slot change (an endpoint moved between spare slots), end to end through the client:
 *    the complete set through `POST /v1/apply` against the slots alone through
 *    `POST /v1/runtime-change`; both are applied through HAProxy's runtime API.
 * 2. Time from the kubelet's `..data` swap to the new trust in effect: in-process (the
 *    watcher's change), and end to end (the running agent accepting a controller certificate of
 *    a CA that only the new revision trusts, probed with fresh TLS connections).
 *
 *   node bench/agent-apply.ts [runs=25]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { writeAtomicProjection } from '../dev/lib/atomic-writer.ts';
import { freePort } from '../dev/lib/free-port.ts';
import { type LocalSandbox, startLocalSandbox } from '../dev/lib/local-sandbox.ts';
import { type SupervisedProcess, startSupervised } from '../dev/lib/supervised-process.ts';
import { projectRoot } from '../dev/lib/tools.ts';
import { getLocal } from '../src/agent/local-client.ts';
import { MasterSocket } from '../src/agent/master-socket.ts';
import { parseProcessList } from '../src/agent/process-list.ts';
import type { RuntimeChangeRequestBody } from '../src/agent-api/api-types.ts';
import { type ApplyFile, encodeApply } from '../src/agent-api/apply-encoding.ts';
import { digestOf } from '../src/agent-api/apply-request.ts';
import { fileSetDigest } from '../src/agent-api/file-set-digest.ts';
import { runtimePlan } from '../src/haproxy/runtime-changes.ts';
import { AgentClient } from '../src/controller/delivery/agent-client.ts';
import {
  type CertificateAuthority,
  type LeafRole,
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
} from '../src/pki/index.ts';
import { TlsMaterialWatcher } from '../src/tls/material-watcher.ts';

const runs = Number(process.argv[2] ?? 25);
const backends = 1_000;
const address = '127.0.30.1';
const dir = mkdtempSync(join(tmpdir(), 'bench-agent-'));
const processes: SupervisedProcess[] = [];
let sandbox: LocalSandbox | undefined;

async function authority(): Promise<CertificateAuthority> {
  const { certificate, keys } = await issueCa({
    commonName: 'haptic-agent-ca',
    validityDays: 30,
    now: new Date(),
  });
  return { certificate, privateKey: keys.privateKey };
}

async function identity(
  ca: CertificateAuthority,
  role: LeafRole,
  name: string,
  trust: CertificateAuthority[],
) {
  const leaf = await issueLeaf({
    role,
    dnsName: name,
    issuer: ca,
    validityDays: 30,
    now: new Date(),
  });
  return {
    'tls.crt': Buffer.from(encodeCertificateChain([leaf.certificate])),
    'tls.key': Buffer.from(encodePrivateKey(leaf.keys.privateKey)),
    'ca.crt': Buffer.from(encodeCertificateChain(trust.map((t) => t.certificate))),
  };
}

/** `filled`: the backend whose spare slot s2 holds an endpoint (a runtime change away). */
function config(marker: string, httpPort: number, filled = -1): string {
  const lines = [
    'global',
    '  default-path config',
    '  log stderr format raw local0',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 10s',
    '  timeout server 10s',
    'frontend site',
    `  bind ${address}:${httpPort}`,
    `  use_backend %[req.hdr(host),field(1,:),lower,map(maps/hosts.map,be_default)]`,
    'backend be_default',
    `  http-request return status 200 content-type text/plain string "${marker}"`,
  ];
  for (let i = 0; i < backends; i += 1) {
    lines.push(
      `backend be_${i}`,
      '  balance roundrobin',
      `  server s1 127.0.0.1:${20_000 + i} check disabled`,
      i === filled
        ? `  server s2 127.0.0.3:${20_000 + i}`
        : `  server s2 127.0.0.2:${20_000 + i} disabled`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function files(marker: string, httpPort: number, filled = -1): ApplyFile[] {
  const map = Array.from({ length: backends }, (_, i) => `host${i}.example be_${i}`).join('\n');
  return [
    { path: 'haproxy.cfg', content: Buffer.from(config(marker, httpPort, filled)) },
    { path: 'maps/hosts.map', content: Buffer.from(`${map}\n`) },
  ];
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** `reload`, then `show proc` every 5 ms until a worker not seen before runs. */
async function bareReload(master: MasterSocket): Promise<number> {
  const before = parseProcessList(await master.command('show proc'));
  if (before === undefined) throw new Error('no process list');
  const known = new Set([...before.workers, ...before.oldWorkers].map((worker) => worker.pid));
  const started = performance.now();
  await master.command('reload');
  for (;;) {
    const list = parseProcessList(await master.command('show proc').catch(() => ''));
    if (
      list !== undefined &&
      list.master.reloads > before.master.reloads &&
      list.workers.some((worker) => !known.has(worker.pid))
    ) {
      return performance.now() - started;
    }
    await sleep(5);
  }
}

function stats(values: readonly number[]): { median: number; p90: number; min: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { median: at(0.5), p90: at(0.9), min: sorted[0] ?? NaN };
}

const format = (ms: number) => `${ms.toFixed(1)} ms`;

/** One request with a fresh TLS connection; true when the agent authorised it. */
async function accepted(port: number, material: Record<string, Buffer>): Promise<boolean> {
  return new Promise((resolve) => {
    const call = request(
      {
        host: address,
        port,
        path: '/v1/state',
        agent: false,
        servername: 'haptic-agent',
        cert: material['tls.crt'],
        key: material['tls.key'],
        ca: material['ca.crt'],
      },
      (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      },
    );
    call.on('error', () => {
      resolve(false);
    });
    call.end();
  });
}

try {
  const ca = await authority();
  const nextCa = await authority();
  const agentPort = await freePort();
  const httpPort = await freePort();
  const paths = {
    tls: join(dir, 'agent-tls'),
    base: join(dir, 'haproxy-config'),
    master: join(dir, 'run', 'master.sock'),
    local: join(dir, 'run', 'agent.sock'),
    state: join(dir, 'state', 'state.json'),
  };
  mkdirSync(join(dir, 'run'), { recursive: true });
  // The agent checks every apply in its check sandbox before HAProxy sees it, as in the chart.
  sandbox = await startLocalSandbox({ dir: join(dir, 'sandbox') });
  const agentMaterial = await identity(ca, 'agent', 'haptic-agent', [ca]);
  await writeAtomicProjection(paths.tls, agentMaterial);
  processes.push(
    startSupervised({
      name: 'agent',
      command: process.execPath,
      args: [
        join(projectRoot, 'src/cli/main.ts'),
        'agent',
        `--listen=${address}:${agentPort}`,
        `--tls-dir=${paths.tls}`,
        '--tls-client-name=haptic-controller',
        `--base-dir=${paths.base}`,
        `--master-socket=${paths.master}`,
        `--local-socket=${paths.local}`,
        `--state-file=${paths.state}`,
        `--check-socket=${sandbox.socket}`,
        '--log-level=info',
      ],
      logFile: join(dir, 'agent.log'),
    }),
  );
  await until(
    async () =>
      (await getLocal(paths.local, '/healthz', 1_000).catch(() => undefined))?.status === 200,
    'the agent',
  );
  processes.push(
    startSupervised({
      name: 'haproxy',
      command: 'haproxy',
      args: [
        '-W',
        '-db',
        '-S',
        paths.master,
        '-C',
        paths.base,
        '-f',
        join(paths.base, 'haproxy.cfg'),
      ],
      logFile: join(dir, 'haproxy.log'),
    }),
  );
  const master = new MasterSocket(paths.master);
  await until(
    async () => /worker/.test(await master.command('show proc').catch(() => '')),
    'HAProxy',
  );

  const controllerDir = join(dir, 'controller-tls');
  await writeAtomicProjection(
    controllerDir,
    await identity(ca, 'controller', 'haptic-controller', [ca]),
  );
  const watcher = await TlsMaterialWatcher.start({
    dir: controllerDir,
    logger: pino({ level: 'silent' }),
  });
  const client = new AgentClient({ mode: 'mtls', material: watcher, serverName: 'haptic-agent' });
  const endpoint = { name: 'bench', host: address, port: agentPort };

  // 1. Apply latency against a bare reload.
  const first = await client.apply(endpoint, encodeApply(files('warm-up', httpPort)));
  if (!first.ok) throw new Error(first.error.message);
  const bare: number[] = [];
  const agentSide: number[] = [];
  const endToEnd: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    bare.push(await bareReload(master));
    const encoded = encodeApply(files(`run-${run}`, httpPort));
    const started = performance.now();
    const result = await client.apply(endpoint, encoded);
    endToEnd.push(performance.now() - started);
    if (!result.ok || !result.value.reloaded)
      throw new Error(`apply ${run} did not reload: ${JSON.stringify(result)}`);
    agentSide.push(result.value.durationMs);
  }
  const pairRatios = agentSide.map((ms, i) => ms / (bare[i] ?? NaN));
  const bareStats = stats(bare);
  const agentStats = stats(agentSide);
  const endStats = stats(endToEnd);
  const size = files('x', httpPort).reduce((sum, file) => sum + file.content.byteLength, 0);
  process.stdout.write(
    `\nApply of a ${backends}-backend configuration (${(size / 1024).toFixed(0)} KiB in 2 files), ${runs} interleaved runs\n`,
  );
  process.stdout.write(
    `  bare master-socket reload           median ${format(bareStats.median)}  p90 ${format(bareStats.p90)}\n`,
  );
  process.stdout.write(
    `  agent apply (check+stage+reload+verify)   median ${format(agentStats.median)}  p90 ${format(agentStats.p90)}  ratio ${(agentStats.median / bareStats.median).toFixed(2)}x\n`,
  );
  process.stdout.write(
    `  end to end via the mTLS client      median ${format(endStats.median)}  p90 ${format(endStats.p90)}  ratio ${(endStats.median / bareStats.median).toFixed(2)}x\n`,
  );

  const phases = readFileSync(join(dir, 'agent.log'), 'utf8')
    .split('\n')
    .filter((line) => line.includes('"configuration applied"'))
    .slice(-runs)
    .map((line) => (JSON.parse(line) as { phasesMs: Record<string, number> }).phasesMs);
  const phaseNames = Object.keys(phases[0] ?? {});
  process.stdout.write(
    `  per-run ratio (apply / the bare reload just before)  median ${stats(pairRatios).median.toFixed(2)}x\n`,
  );
  process.stdout.write(
    `  agent phases (median)               ${phaseNames.map((name) => `${name} ${format(stats(phases.map((p) => p[name] ?? NaN)).median)}`).join(', ')}\n`,
  );

  // 1b. Slot changes (an endpoint moves between two backends' spare slots): the complete set
  // (POST /v1/apply, applied at runtime) against the slots alone (POST /v1/runtime-change),
  // interleaved, end to end through the client.
  const marker = `run-${runs - 1}`;
  const setOf = (set: readonly ApplyFile[]) => ({
    files: set.map((file) => ({ path: file.path, digest: digestOf(file.content) })),
    config: Buffer.from(set[0]?.content ?? new Uint8Array()).toString('utf8'),
  });
  let held = files(marker, httpPort);
  const slotFull: number[] = [];
  const slotCompact: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const viaFiles = files(marker, httpPort, 2 * run);
    let started = performance.now();
    const full = await client.apply(endpoint, encodeApply(viaFiles));
    slotFull.push(performance.now() - started);
    if (!full.ok || full.value.reloaded || (full.value.runtimeChanges ?? 0) === 0) {
      throw new Error(`slot change ${run} was not a runtime change: ${JSON.stringify(full)}`);
    }
    held = viaFiles;
    const next = files(marker, httpPort, 2 * run + 1);
    started = performance.now();
    const [from, to] = [setOf(held), setOf(next)];
    const plan = runtimePlan(from, to);
    if (!plan.runtime) throw new Error(plan.reason);
    const body: RuntimeChangeRequestBody = {
      baseDigest: fileSetDigest(from.files),
      resultDigest: fileSetDigest(to.files),
      changes: plan.changes,
    };
    const compact = await client.runtimeChange(endpoint, Buffer.from(JSON.stringify(body)));
    slotCompact.push(performance.now() - started);
    if (!compact.ok || compact.value.reloaded) {
      throw new Error(`runtime change ${run} failed: ${JSON.stringify(compact)}`);
    }
    held = next;
  }
  const fullStats = stats(slotFull);
  const compactStats = stats(slotCompact);
  process.stdout.write(
    `\nSlot change (an endpoint moved, 2 slots), ${runs} interleaved runs each\n`,
  );
  process.stdout.write(
    `  complete set, POST /v1/apply       median ${format(fullStats.median)}  p90 ${format(fullStats.p90)}\n`,
  );
  process.stdout.write(
    `  slots only, POST /v1/runtime-change  median ${format(compactStats.median)}  p90 ${format(compactStats.p90)}  (runtimePlan and encoding included)\n`,
  );

  // 2a. ..data swap to the watcher's change, in process.
  const swapDir = join(dir, 'swap-tls');
  await writeAtomicProjection(swapDir, await identity(ca, 'agent', 'haptic-agent', [ca]));
  const swapWatcher = await TlsMaterialWatcher.start({
    dir: swapDir,
    logger: pino({ level: 'silent' }),
    pollIntervalMs: 3_600_000,
  });
  const inProcess: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const next = await identity(ca, 'agent', 'haptic-agent', [ca]);
    const changed = new Promise<number>((resolve) => {
      const stop = swapWatcher.onChange(() => {
        stop();
        resolve(performance.now());
      });
    });
    const started = performance.now();
    await writeAtomicProjection(swapDir, next);
    inProcess.push((await changed) - started);
  }
  swapWatcher.close();

  // 2b. ..data swap to the running agent accepting a controller of the new CA only.
  const newController = await identity(nextCa, 'controller', 'haptic-controller', [ca]);
  const endToEndTrust: number[] = [];
  for (let run = 0; run < Math.min(runs, 10); run += 1) {
    const to = run % 2 === 0 ? nextCa : ca;
    const probe =
      run % 2 === 0 ? newController : await identity(ca, 'controller', 'haptic-controller', [ca]);
    if (await accepted(agentPort, probe))
      throw new Error('the probe identity is trusted before the swap');
    const agentIdentity = {
      ...agentMaterial,
      'ca.crt': Buffer.from(encodeCertificateChain([to.certificate])),
    };
    const started = performance.now();
    await writeAtomicProjection(paths.tls, agentIdentity);
    while (!(await accepted(agentPort, probe))) {
      if (performance.now() - started > 10_000) throw new Error('new trust never took effect');
    }
    endToEndTrust.push(performance.now() - started);
  }
  const swapStats = stats(inProcess);
  const trustStats = stats(endToEndTrust);
  process.stdout.write(`\n..data swap to new trust in effect\n`);
  process.stdout.write(
    `  watcher change (in process, ${inProcess.length} swaps)        median ${format(swapStats.median)}  p90 ${format(swapStats.p90)}\n`,
  );
  process.stdout.write(
    `  agent accepts the new CA (end to end, ${endToEndTrust.length} swaps)  median ${format(trustStats.median)}  p90 ${format(trustStats.p90)}  (fresh TLS connection per probe)\n`,
  );
  process.stdout.write(
    `\n${JSON.stringify({ backends, runs, bareReloadMs: bareStats, agentApplyMs: agentStats, endToEndApplyMs: endStats, ratio: agentStats.median / bareStats.median, pairRatioMedian: stats(pairRatios).median, slotChangeFullSetMs: fullStats, slotChangeRuntimeMs: compactStats, swapToWatcherMs: swapStats, swapToAgentTrustMs: trustStats })}\n`,
  );
  client.close();
  watcher.close();
} finally {
  await Promise.all(processes.map((child) => child.stop()));
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
}
