/**
 * Latency of the webhook's Secret review under load: a child process serves the real webhook
 * (express, HTTPS, TLS 1.3, dispatch, validators) on 127.0.0.1; this process keeps 100
 * requests in flight over 100 kept-alive TLS connections and records each request's latency.
 * Each request is an AdmissionReview UPDATE of the agent identity Secret (old and new object,
 * stage 2 of the guide's CA rotation: new identity, new CA, previous CA until a deadline).
 *
 * Three phases: every request with the same Secret contents (what the API server sends for
 * retries and repeated applies: decoded material is cached), then every request with
 * contents the webhook has not seen before (cold decoding and chain verification), both
 * closed-loop; then open loop: requests of contents not seen before sent on a fixed schedule
 * (`rate` per second for `seconds`), whatever the answers, each latency counted from its
 * scheduled start (so a stalled server is not hidden by a stalled sender).
 *
 *   node bench/webhook-review.ts [requests=4000] [concurrency=100] [rate=200] [seconds=10]
 *
 * The last line is one JSON object, `{"coldCpuMs": …, "openLoopP99Ms": …}`: server CPU per
 * cold review and the open-loop p99 latency, so any later run can be compared.
 *
 * Each phase also reports, from inside the server, how late its event loop ran (p99 and max
 * of `monitorEventLoopDelay`) and its garbage collections (count, longest pause), and for
 * the open loop the same delay in this (the sending) process: where a tail comes from.
 *
 * BENCH_SERVER_FLAGS passes Node flags to the server process, for example
 * `--max-semi-space-size=32` (fewer young-generation collections under load).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { Agent, request } from 'node:https';
import { PerformanceObserver, constants, monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
  type Certificate,
} from '../src/pki/index.ts';
import { fixedCertificateSource, startWebhook } from '../src/webhook/index.ts';

const identities = {
  namespace: 'haptic',
  provider: 'external',
  serverSecret: 'agent-identity',
  clientSecret: 'controller-identity',
  serverName: 'haptic-agent',
  clientName: 'haptic-controller',
} as const;

async function serve(): Promise<void> {
  const now = new Date();
  const ca = await issueCa({ commonName: 'bench-webhook-ca', validityDays: 2, now });
  const leaf = await issueLeaf({
    role: 'agent',
    dnsName: 'localhost',
    issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
    validityDays: 1,
    now,
  });
  const reviewMs: number[] = [];
  const server = await startWebhook(
    {
      identities,
      onReview: (event) => {
        reviewMs.push(event.ms);
      },
    },
    {
      host: '127.0.0.1',
      port: 0,
      certificates: fixedCertificateSource({
        cert: Buffer.from(encodeCertificateChain([leaf.certificate])),
        key: Buffer.from(encodePrivateKey(leaf.keys.privateKey)),
      }),
    },
  );
  const loop = loopMonitor();
  const gcPauses: GcPause[] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const detail: unknown = 'detail' in entry ? entry.detail : undefined;
      const kind =
        typeof detail === 'object' && detail !== null && 'kind' in detail ? detail.kind : 0;
      gcPauses.push({ ms: entry.duration, major: kind === constants.NODE_PERFORMANCE_GC_MAJOR });
    }
  }).observe({ entryTypes: ['gc'] });
  process.send?.({ port: server.port, ca: encodeCertificateChain([ca.certificate]) });
  process.on('message', (message) => {
    if (message === 'stats') {
      const usage = process.cpuUsage();
      const stats: ServerStats = {
        reviewMs: reviewMs.splice(0),
        cpuMs: (usage.user + usage.system) / 1000,
        loop: loop.take(),
        gcPauses: gcPauses.splice(0),
        heapMb: process.memoryUsage().heapUsed / 2 ** 20,
      };
      process.send?.(stats);
    }
  });
  process.on('disconnect', () => void server.close().then(() => process.exit(0)));
}

interface LoopDelay {
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** Event-loop delay since the last `take` (1 ms resolution). */
function loopMonitor(): { take: () => LoopDelay } {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  return {
    take: () => {
      const taken = { p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 };
      histogram.reset();
      return taken;
    },
  };
}

const describeLoop = (loop: LoopDelay): string =>
  `event loop late p99 ${loop.p99Ms.toFixed(1)} ms, max ${loop.maxMs.toFixed(1)} ms`;

interface GcPause {
  readonly ms: number;
  readonly major: boolean;
}

function describeServer(stats: ServerStats): string {
  const longest = Math.max(0, ...stats.gcPauses.map((pause) => pause.ms));
  const total = stats.gcPauses.reduce((sum, pause) => sum + pause.ms, 0);
  const major = stats.gcPauses.filter((pause) => pause.major).length;
  return `server ${describeLoop(stats.loop)}; GC ${stats.gcPauses.length}× (${major} major) ${total.toFixed(0)} ms, longest ${longest.toFixed(1)} ms; heap ${stats.heapMb.toFixed(0)} MB`;
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');
const pem = (...certificates: Certificate[]): string => encodeCertificateChain(certificates);

/** One rotation: old identity under the old CA, new identity under the new CA. */
async function rotation(index: number): Promise<string> {
  const now = new Date();
  const oldCa = await issueCa({ commonName: `old-ca-${index}`, validityDays: 30, now });
  const newCa = await issueCa({ commonName: `new-ca-${index}`, validityDays: 30, now });
  const issue = (issuer: typeof oldCa) =>
    issueLeaf({
      role: 'agent',
      dnsName: 'haptic-agent',
      issuer: { certificate: issuer.certificate, privateKey: issuer.keys.privateKey },
      validityDays: 7,
      now,
    });
  const [oldLeaf, newLeaf] = await Promise.all([issue(oldCa), issue(newCa)]);
  const until = `${new Date(now.getTime() + 3_600_000).toISOString().slice(0, 19)}Z`;
  const secret = (leaf: typeof oldLeaf) => ({
    kind: 'Secret',
    apiVersion: 'v1',
    metadata: { name: 'agent-identity', namespace: 'haptic' },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': b64(pem(leaf.certificate)),
      'tls.key': b64(encodePrivateKey(leaf.keys.privateKey)),
      'ca.crt': b64(pem(newCa.certificate)),
      'previous-ca.crt': b64(pem(oldCa.certificate)),
      'previous-ca-until': b64(until),
    },
  });
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${index}`,
      kind: { group: '', version: 'v1', kind: 'Secret' },
      name: 'agent-identity',
      namespace: 'haptic',
      operation: 'UPDATE',
      userInfo: { username: 'bench' },
      object: secret(newLeaf),
      oldObject: secret(oldLeaf),
      dryRun: false,
    },
  });
}

interface Target {
  readonly port: number;
  readonly agent: Agent;
  readonly ca: string;
}

function post(target: Target, body: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: '/validate',
        method: 'POST',
        agent: target.agent,
        ca: target.ca,
        servername: 'localhost',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const answer = JSON.parse(text) as { response?: { allowed?: boolean } };
          if (res.statusCode !== 200 || answer.response?.allowed !== true) {
            reject(new Error(`unexpected answer ${String(res.statusCode)}: ${text}`));
          } else resolve(performance.now() - started);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Sends `bodies` at `rate` per second on a fixed schedule (open loop) and returns each
 * latency measured from the request's scheduled start.
 */
async function openLoop(
  target: Target,
  bodies: readonly string[],
  rate: number,
): Promise<number[]> {
  const started = performance.now();
  const pending: Promise<number>[] = [];
  while (pending.length < bodies.length) {
    const due = Math.min(
      bodies.length,
      Math.floor(((performance.now() - started) * rate) / 1000) + 1,
    );
    while (pending.length < due) {
      const scheduled = started + (pending.length * 1000) / rate;
      const body = bodies[pending.length] ?? '';
      pending.push(post(target, body).then(() => performance.now() - scheduled));
    }
    const next = started + (pending.length * 1000) / rate;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
  }
  return Promise.all(pending);
}

async function load(
  target: Target,
  bodies: readonly string[],
  concurrency: number,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next++] ?? '';
      latencies.push(await post(target, body));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return latencies;
}

function quantiles(values: number[]): (q: number) => string {
  const sorted = [...values].sort((a, b) => a - b);
  return (q) =>
    (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN).toFixed(2);
}

function summary(name: string, latencies: number[], seconds: number): string {
  const at = quantiles(latencies);
  return `${name.padEnd(34)} n=${latencies.length}  p50 ${at(0.5)} ms  p90 ${at(0.9)} ms  p99 ${at(0.99)} ms  max ${at(1)} ms  ${(latencies.length / seconds).toFixed(0)} req/s`;
}

interface ServerStats {
  readonly reviewMs: number[];
  readonly cpuMs: number;
  readonly loop: LoopDelay;
  readonly gcPauses: GcPause[];
  readonly heapMb: number;
}

function serverStats(child: ChildProcess): Promise<ServerStats> {
  return new Promise((resolve) => {
    child.once('message', (message) => {
      resolve(message as ServerStats);
    });
    child.send('stats');
  });
}

async function measure(): Promise<void> {
  const total = Number(process.argv[2] ?? 4000);
  const concurrency = Number(process.argv[3] ?? 100);
  const rate = Number(process.argv[4] ?? 200);
  const openLoopCount = rate * Number(process.argv[5] ?? 10);
  const child = fork(fileURLToPath(import.meta.url), ['serve'], {
    stdio: 'inherit',
    execArgv: (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean),
  });
  const { port, ca } = await new Promise<{ port: number; ca: string }>((resolve) => {
    child.once('message', (message) => {
      resolve(message as { port: number; ca: string });
    });
  });
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const target = { port, agent, ca };
  try {
    process.stdout.write(`generating ${total + openLoopCount} distinct rotations...\n`);
    const generated: string[] = [];
    for (let i = 0; i < total + openLoopCount; i += 50) {
      generated.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(50, total + openLoopCount - i) }, (_, j) =>
            rotation(i + j),
          ),
        )),
      );
    }
    const distinct = generated.slice(0, total);
    const unseen = generated.slice(total);
    const same = Array.from({ length: total }, () => distinct[0] ?? '');
    await load(target, same.slice(0, Math.min(500, total)), concurrency); // warm-up: connections, JIT
    console.log(
      `node ${process.version}, ${concurrency} requests in flight, TLS 1.3 keep-alive, one server process`,
    );
    let before = await serverStats(child);
    let coldCpuMs = NaN;
    for (const [name, bodies] of [
      ['same Secret contents (cached)', same],
      ['distinct Secret contents (cold)', distinct],
    ] as const) {
      const started = performance.now();
      const clientCpu = process.cpuUsage();
      const latencies = await load(target, bodies, concurrency);
      const seconds = (performance.now() - started) / 1000;
      const client = process.cpuUsage(clientCpu);
      const after = await serverStats(child);
      const review = quantiles(after.reviewMs);
      const serverCpuMs = (after.cpuMs - before.cpuMs) / bodies.length;
      console.log(summary(name, latencies, seconds));
      console.log(
        `${''.padEnd(34)} validation inside the server: p50 ${review(0.5)} ms  p99 ${review(0.99)} ms; ` +
          `CPU per request: server ${serverCpuMs.toFixed(2)} ms, client ${((client.user + client.system) / 1000 / bodies.length).toFixed(2)} ms`,
      );
      console.log(`${''.padEnd(34)} ${describeServer(after)}`);
      coldCpuMs = serverCpuMs;
      before = after;
    }
    const sender = loopMonitor();
    const started = performance.now();
    const latencies = await openLoop(target, unseen, rate);
    const seconds = (performance.now() - started) / 1000;
    const after = await serverStats(child);
    console.log(summary(`open loop, ${rate}/s, distinct (cold)`, latencies, seconds));
    console.log(
      `${''.padEnd(34)} CPU per request: server ${((after.cpuMs - before.cpuMs) / unseen.length).toFixed(2)} ms`,
    );
    console.log(`${''.padEnd(34)} ${describeServer(after)}`);
    console.log(`${''.padEnd(34)} sender ${describeLoop(sender.take())}`);
    console.log(
      JSON.stringify({
        coldCpuMs: Number(coldCpuMs.toFixed(2)),
        openLoopP99Ms: Number(quantiles(latencies)(0.99)),
      }),
    );
  } finally {
    agent.destroy();
    child.disconnect();
  }
}

if (process.argv[2] === 'serve') await serve();
else await measure();
