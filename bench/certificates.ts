/**
 * Numbers for the agent-certificates note, on a private local control plane (etcd +
 * kube-apiserver on loopback, started and stopped here):
 * - time to bootstrap (issuer + both identity Secrets) and of a steady-state run, in process
 *   (the reconciler alone) and as a process (`haptic certificates renew`, node start-up included);
 * - API requests per steady-state run, counted twice: by the client's request counter, and by
 *   the API server itself (`apiserver_request_total{resource="secrets"}` before and after).
 *
 * The process runs use dist/cli/main.js when built (`make build`), else src/cli/main.ts.
 *
 *   node bench/certificates.ts [runs=30]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { execa } from 'execa';
import { pino } from 'pino';
import { startControlPlane, type ControlPlane } from '../dev/lib/control-plane.ts';
import { projectRoot } from '../dev/lib/tools.ts';
import { type RenewOptions, renewCertificates } from '../src/certs/reconciler.ts';
import { makeApiClient } from '../src/kube/api-client.ts';
import { RequestCounter } from '../src/kube/request-counter.ts';
import { SecretClient } from '../src/kube/secrets.ts';

const runs = Number(process.argv[2] ?? 30);
const processRuns = Math.max(3, Math.round(runs / 3));
// The built binary as the image runs it; the TypeScript entry point when there is no build.
const built = join(projectRoot, 'dist/cli/main.js');
const cli = existsSync(built) ? built : join(projectRoot, 'src/cli/main.ts');

/** `apiserver_request_total` for Secrets, summed by verb. */
function secretRequests(plane: ControlPlane): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${plane.server}/metrics`,
      {
        ca: readFileSync(plane.pki.caCert),
        cert: readFileSync(plane.pki.adminCert),
        key: readFileSync(plane.pki.adminKey),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const counts: Record<string, number> = {};
          for (const line of body.split('\n')) {
            if (
              !line.startsWith('apiserver_request_total{') ||
              !line.includes('resource="secrets"')
            )
              continue;
            const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? '?';
            counts[verb] = (counts[verb] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
          }
          resolve(counts);
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function delta(
  after: Record<string, number>,
  before: Record<string, number>,
  per: number,
): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [verb, count] of Object.entries(after)) {
    const value = (count - (before[verb] ?? 0)) / per;
    if (value !== 0) result[verb] = value;
  }
  return result;
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function describe(values: readonly number[]): string {
  return `median ${quantile(values, 0.5).toFixed(1).padStart(6)} ms   p90 ${quantile(values, 0.9).toFixed(1).padStart(6)} ms   min ${Math.min(
    ...values,
  )
    .toFixed(1)
    .padStart(6)} ms`;
}

const dir = mkdtempSync(join(tmpdir(), 'bench-certificates-'));
const plane = await startControlPlane({ dir });
try {
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  const admin = kc.makeApiClient(CoreV1Api);
  const silent = pino({ level: 'silent' });
  const optionsFor = (namespace: string): RenewOptions => ({
    secrets: {
      namespace,
      issuer: 'haptic-agent-ca',
      server: 'haptic-agent-server-tls',
      client: 'haptic-agent-client-tls',
    },
    names: { server: 'haptic-agent', client: 'haptic-controller' },
    validityDays: 365,
    now: new Date(),
  });
  const reconcile = async (namespace: string, counter: RequestCounter): Promise<number> => {
    const core = makeApiClient(kc, CoreV1Api, { counter, userAgent: 'haptic-bench' });
    const started = performance.now();
    await renewCertificates(new SecretClient(core, namespace), optionsFor(namespace), silent);
    return performance.now() - started;
  };

  // In process: the reconciler alone, on a client created per run (as a Job would).
  const bootstrapMs: number[] = [];
  const bootstrapRequests = new RequestCounter();
  for (let run = -2; run < runs; run += 1) {
    const namespace = `boot-${run + 2}`;
    await admin.createNamespace({ body: { metadata: { name: namespace } } });
    const ms = await reconcile(namespace, run >= 0 ? bootstrapRequests : new RequestCounter());
    if (run >= 0) bootstrapMs.push(ms);
  }
  const steadyMs: number[] = [];
  const steadyRequests = new RequestCounter();
  for (let run = -2; run < 0; run += 1) await reconcile('boot-0', new RequestCounter());
  const serverBefore = await secretRequests(plane);
  for (let run = 0; run < runs; run += 1) steadyMs.push(await reconcile('boot-0', steadyRequests));
  const serverSteady = delta(await secretRequests(plane), serverBefore, runs);

  // As a process: `haptic certificates renew`, node start-up and module loading included.
  const env = { KUBECONFIG: plane.kubeconfigPath, PATH: process.env.PATH ?? '' };
  const cliRun = async (namespace: string): Promise<number> => {
    const started = performance.now();
    const result = await execa(process.execPath, [cli, 'certificates', 'renew', '-n', namespace], {
      env,
      reject: false,
    });
    if (result.exitCode !== 0) throw new Error(`renew failed: ${result.stderr}`);
    return performance.now() - started;
  };
  const processBootMs: number[] = [];
  const processSteadyMs: number[] = [];
  for (let run = 0; run < processRuns; run += 1) {
    const namespace = `proc-${run}`;
    await admin.createNamespace({ body: { metadata: { name: namespace } } });
    processBootMs.push(await cliRun(namespace));
    processSteadyMs.push(await cliRun(namespace));
  }

  console.log(
    `node ${process.version}; ${runs} in-process runs each (after 2 warm-up runs), ${processRuns} process runs each`,
  );
  console.log(
    `bootstrap, reconciler        ${describe(bootstrapMs)}   requests/run ${JSON.stringify(delta(bootstrapRequests.counts(), {}, runs))}`,
  );
  console.log(
    `steady state, reconciler     ${describe(steadyMs)}   requests/run ${JSON.stringify(delta(steadyRequests.counts(), {}, runs))}`,
  );
  console.log(
    `steady state, API server     apiserver_request_total{resource="secrets"} per run ${JSON.stringify(serverSteady)}`,
  );
  console.log(`process: ${process.execPath} ${cli}`);
  console.log(`bootstrap, haptic process    ${describe(processBootMs)}`);
  console.log(`steady state, haptic process ${describe(processSteadyMs)}`);
} finally {
  await plane.stop();
  rmSync(dir, { recursive: true, force: true });
}
