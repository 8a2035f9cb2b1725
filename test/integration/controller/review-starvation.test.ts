/**
 * Reviews cannot take the check sandbox from the reconciler, nor learn other tenants' data:
 * the webhook `haptic run` serves (HTTPS, dispatch, the routing reviewer, the pipeline with its
 * render process) in front of a real check sandbox (`haptic sandbox serve`, real HAProxy).
 *
 * - A `server-template` of 50,000 servers is refused by the lint, before haproxy -c runs.
 * - A review whose check outlasts its admission deadline (the API server's `?timeout=`) is
 *   answered in time, and its haproxy -c is killed then, not at the sandbox's 30 s limit.
 * - A flood of such reviews leaves the reconciler's check its own lane: it runs at once.
 * - A proposed template gets the same answer whatever another namespace holds.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSandbox, startLocalSandbox } from '../../../dev/lib/local-sandbox.ts';
import {
  type ClusterSnapshot,
  emptySnapshot,
} from '../../../src/controller/routing/cluster-snapshot.ts';
import { ConfigPipeline } from '../../../src/controller/pipeline/config-pipeline.ts';
import { createRoutingReviewer } from '../../../src/controller/admission/routing-reviewer.ts';
import {
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
} from '../../../src/pki/index.ts';
import { readIngress } from '../../../src/validation/ingress-view.ts';
import {
  type WebhookServer,
  defaultDeadlineMs,
  fixedCertificateSource,
  routingKindRoutes,
  startWebhook,
} from '../../../src/webhook/index.ts';
import { eventually } from '../../support/eventually.ts';

const head = `global
  maxconn 100
defaults
  mode http
  timeout client 5s
  timeout connect 5s
  timeout server 5s
frontend web
  bind 127.0.0.1:18080
  default_backend app
backend app
  server app 127.0.0.1:9000
`;

/** Eight backends of 8,191 servers: just within the lint's bounds, seconds of haproxy -c. */
const heavy = `${head}{% for i in (1..8) %}backend b{{ i }}
  server-template s 1-8191 10.0.0.1:80
{% endfor %}`;

function templateConfig(template: string, uid = 'proposed') {
  return {
    apiVersion: 'haproxy-haptic.org/v1alpha1',
    kind: 'HAProxyTemplateConfig',
    metadata: { namespace: 'haptic', name: 'haptic', uid, resourceVersion: '7' },
    spec: { haproxyConfig: { template } },
  };
}

const configured = templateConfig(`${head}# the configured template\n`, 'configured');

const dir = mkdtempSync(join(tmpdir(), 'haptic-review-starvation-'));
// Beside `dir`, not in it: the sandbox's user (65534 when started as root) must reach it.
const workDir = mkdtempSync(join(tmpdir(), 'haptic-review-work-'));
let sandbox: LocalSandbox;
let pipeline: ConfigPipeline;
let server: WebhookServer;
let agent: Agent;
let snapshot: ClusterSnapshot = emptySnapshot;

beforeAll(async () => {
  // Root drops to 65534 in the sandbox: its work directory must be open to it.
  chmodSync(workDir, 0o1777);
  sandbox = await startLocalSandbox({
    dir: join(dir, 'sandbox'),
    extraArgs: [`--work-dir=${workDir}`],
  });
  pipeline = new ConfigPipeline({ ingressClass: 'haptic', check: { socket: sandbox.socket } });
  const now = new Date();
  const ca = await issueCa({ commonName: 'starvation-ca', validityDays: 2, now });
  const leaf = await issueLeaf({
    role: 'agent',
    dnsName: 'localhost',
    issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
    validityDays: 1,
    now,
  });
  const reviewer = createRoutingReviewer({
    watch: {
      snapshot: () => snapshot,
      templateConfig: () => configured,
      ourClassIsDefault: () => false,
    },
    pipeline,
    ingressClass: 'haptic',
    namespace: 'haptic',
    templateConfigName: 'haptic',
  });
  server = await startWebhook(
    { kinds: routingKindRoutes(reviewer, { namespace: 'haptic', name: 'haptic' }) },
    {
      host: '127.0.0.1',
      port: 0,
      certificates: fixedCertificateSource({
        cert: Buffer.from(encodeCertificateChain([leaf.certificate])),
        key: Buffer.from(encodePrivateKey(leaf.keys.privateKey)),
      }),
    },
  );
  agent = new Agent({ ca: encodeCertificateChain([ca.certificate]), maxSockets: 64 });
}, 60_000);

afterAll(async () => {
  agent.destroy();
  await server.close();
  await pipeline.close();
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
});

interface Answer {
  readonly allowed: boolean;
  readonly status?: { readonly code: number; readonly message: string };
  readonly warnings?: readonly string[];
}

/**
 * POSTs an AdmissionReview of a CREATE of `object` to /validate`query`, as the API server does;
 * `signal` closes the connection (a caller that leaves).
 */
function review(
  object: { readonly kind: string },
  query = '',
  signal?: AbortSignal,
): Promise<Answer> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'review',
      kind: { group: 'haproxy-haptic.org', version: 'v1alpha1', kind: object.kind },
      name: 'haptic',
      namespace: 'haptic',
      operation: 'CREATE',
      userInfo: { username: 'system:anonymous' },
      object,
      oldObject: null,
    },
  });
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: `/validate${query}`,
        method: 'POST',
        agent,
        ...(signal === undefined ? {} : { signal }),
        servername: 'localhost',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          const parsed = JSON.parse(text) as { response?: Answer };
          if (parsed.response === undefined) reject(new Error(`no review in ${text}`));
          else resolve(parsed.response);
        });
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}

/** The sandbox's haproxy processes (their command line names its work directory). */
function checksRunning(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string;
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (args.includes(`${workDir}/`) && args.split('\0').some((arg) => arg.endsWith('haproxy'))) {
      pids.push(Number(entry));
    }
  }
  return pids;
}

/** CPU seconds a process used (utime + stime), or undefined once it is gone. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Samples the sandbox's haproxy processes every 50 ms while `work` runs and after, until none
 * is left (at most 35 s, beyond the sandbox's 30 s limit): the CPU seconds they used in all,
 * and when the last one was seen.
 */
async function watchChecks<T>(work: () => Promise<T>): Promise<{
  readonly result: T;
  readonly cpu: number;
  readonly lastSeenMs: number;
  readonly answeredMs: number;
}> {
  const used = new Map<number, number>();
  const started = performance.now();
  let lastSeen = 0;
  const sample = (): void => {
    for (const pid of checksRunning()) {
      const cpu = cpuSeconds(pid);
      if (cpu !== undefined) used.set(pid, Math.max(used.get(pid) ?? 0, cpu));
      lastSeen = performance.now() - started;
    }
  };
  const timer = setInterval(sample, 50);
  try {
    const result = await work();
    const answeredMs = performance.now() - started;
    await eventually(
      "the sandbox's haproxy processes end",
      () => {
        sample();
        return Promise.resolve(checksRunning());
      },
      (pids) => pids.length === 0,
      35_000,
    );
    const cpu = [...used.values()].reduce((sum, each) => sum + each, 0);
    return { result, cpu, lastSeenMs: lastSeen, answeredMs };
  } finally {
    clearInterval(timer);
  }
}

describe('reviews and the check sandbox', () => {
  it(
    'refuses server-template s 1-50000 in the lint: no haproxy -c runs',
    { timeout: 60_000 },
    async () => {
      const watched = await watchChecks(() =>
        review(templateConfig(`${head}backend many\n  server-template s 1-50000 10.0.0.1:80\n`)),
      );
      console.log(
        `server-template 1-50000: answered in ${watched.answeredMs.toFixed(0)} ms, haproxy CPU ${watched.cpu.toFixed(2)} s, last seen at ${watched.lastSeenMs.toFixed(0)} ms`,
      );
      expect(watched.result).toMatchObject({ allowed: false, status: { code: 403 } });
      expect(watched.result.status?.message).toContain(
        '"server-template s 1-50000" brings its section to 50000 servers, more than the 8192 one backend may declare',
      );
      expect(watched.cpu).toBe(0);
    },
  );

  it(
    "kills a review's haproxy -c at the API server's deadline, not at the sandbox's limit",
    { timeout: 60_000 },
    async () => {
      const watched = await watchChecks(() => review(templateConfig(heavy), '?timeout=2s'));
      console.log(
        `heavy review with ?timeout=2s: answered in ${watched.answeredMs.toFixed(0)} ms, haproxy CPU ${watched.cpu.toFixed(2)} s, last seen at ${watched.lastSeenMs.toFixed(0)} ms`,
      );
      // The API server rounds up to whole seconds: the answer comes within the second before.
      expect(watched.answeredMs).toBeLessThan(1_000 + 300);
      expect(watched.result).toMatchObject({ allowed: true });
      expect(watched.result.warnings?.join(' ')).toMatch(/not checked at admission/);
      expect(watched.lastSeenMs).toBeLessThan(watched.answeredMs + 300);
      expect(checksRunning()).toEqual([]);
    },
  );

  it('kills the check of a review whose caller disconnects, long before its deadline', async () => {
    const gone = new AbortController();
    const answer = review(templateConfig(`${heavy}# left\n`), '', gone.signal).catch(
      (error: unknown) => error,
    );
    await eventually(
      "the review's check runs",
      () => Promise.resolve(checksRunning()),
      (pids) => pids.length > 0,
      3_000,
    );
    expect(checksRunning()).not.toEqual([]);
    gone.abort();
    const left = performance.now();
    await answer;
    await eventually(
      "the review's check stopped",
      () => Promise.resolve(checksRunning()),
      (pids) => pids.length === 0,
      3_000,
    );
    const ms = performance.now() - left;
    console.log(`check of a review whose caller left: stopped ${ms.toFixed(0)} ms after`);
    expect(checksRunning()).toEqual([]);
    // Long before the review's own deadline would have ended it.
    expect(ms).toBeLessThan(defaultDeadlineMs / 4);
  });

  it("runs the reconciler's check at once while reviews flood the sandbox", async () => {
    // Reviews keep arriving, each answered within its deadline while its check would run on.
    const until = performance.now() + 12_000;
    let reviews = 0;
    const flood = Array.from({ length: 18 }, async () => {
      while (performance.now() < until) {
        await review(templateConfig(`${heavy}# ${String(reviews)}\n`));
        reviews += 1;
      }
    });
    // The flood under way: a review answered (its check stopped at its deadline), the next
    // ones' checks running.
    await eventually(
      'the flood holds the review lane',
      () => Promise.resolve({ reviews, running: checksRunning().length }),
      (now) => now.reviews > 0 && now.running > 0,
      10_000,
    );
    const started = performance.now();
    const reconciled = await pipeline.run(configured, snapshot, new Date());
    const ms = performance.now() - started;
    await Promise.all(flood);
    console.log(
      `reconciler check during a flood of ${String(reviews)} reviews: ${ms.toFixed(0)} ms, ${reconciled.ok ? 'checked' : reconciled.message}`,
    );
    expect(reconciled).toMatchObject({ ok: true });
    // Not after a review's check: those run until the review's deadline.
    expect(ms).toBeLessThan(defaultDeadlineMs - 1_000);
    await eventually(
      "the flood's last checks stopped",
      () => Promise.resolve(checksRunning()),
      (pids) => pids.length === 0,
      500,
    );
    expect(checksRunning()).toEqual([]);
  }, 60_000);

  it("answers a proposed template the same whatever another namespace's objects are", async () => {
    const ingress = readIngress({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { namespace: 'payments', name: 'admin', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: {
        ingressClassName: 'haptic',
        rules: [
          {
            host: 'private-admin.payments.example',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'web', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    });
    if (typeof ingress === 'string') throw new Error(ingress);
    const cluster: ClusterSnapshot = {
      ...emptySnapshot,
      ingresses: [ingress],
      services: new Map([
        [
          'payments/web',
          { namespace: 'payments', name: 'web', ports: [{ name: 'http', port: 80 }] },
        ],
      ]),
    };
    // Each asks one question of the state: is there a route (a line only HAProxy refuses), is
    // there a host starting with "private" (a word only the lint refuses), what are the hosts.
    const questions = [
      `${head}{% if routes.size > 0 %}  bogus-directive on\n{% endif %}`,
      `${head}{% for r in routes %}{% assign p = r.host | slice: 0, 7 %}{% if p == "private" %}  balance no-such\n{% endif %}{% endfor %}`,
      `${head}{% for r in routes %}{{ r.host }} x\n{% endfor %}`,
    ];
    for (const question of questions) {
      snapshot = emptySnapshot;
      const empty = await review(templateConfig(question));
      snapshot = cluster;
      const full = await review(templateConfig(question));
      snapshot = emptySnapshot;
      expect(full, question).toEqual(empty);
      expect(JSON.stringify(full)).not.toContain('private-admin');
    }
  }, 60_000);
});
