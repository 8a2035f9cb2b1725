/**
 * Admission review latency for an Ingress (HTTPS POST of an AdmissionReview to the webhook
 * `haptic run` serves: dispatch, value checks, render with the current state, lint, `haproxy -c`
 * in the check sandbox, a `haptic sandbox serve` process as `haptic run` has beside it) against
 * the current state's rendered files checked through the sandbox alone and by a bare
 * `haproxy -c -f`, one of each after every review (side by side, so other work on the machine
 * slows all three alike). Every review proposes a new path, so no check result is reused; the reviewer's pipeline
 * renders incrementally (unchanged loop items, backends and lint are reused). Goal: review ≤
 * 1.15 × bare check. The last line is one JSON object: `ratios` (review p50 / bare p50) and
 * `sandboxRatios` (sandbox check p50 / bare p50: what the review cannot go below), by size.
 *
 *   node bench/controller-admission.ts [ingresses=1000,5000] [reviews=30]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { startLocalSandbox } from '../dev/lib/local-sandbox.ts';
import { checkBundle } from '../src/controller/pipeline/bundle-check.ts';
import { ConfigPipeline } from '../src/controller/pipeline/config-pipeline.ts';
import { createRoutingReviewer } from '../src/controller/admission/routing-reviewer.ts';
import { encodeCertificateChain, encodePrivateKey, issueCa, issueLeaf } from '../src/pki/index.ts';
import { fixedCertificateSource, routingKindRoutes, startWebhook } from '../src/webhook/index.ts';
import { defaultTemplateConfig, snapshotOf } from './controller-fixture.ts';

const sizes = (process.argv[2] ?? '1000,5000').split(',').map(Number);
const reviews = Number(process.argv[3] ?? 30);
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const now = new Date();
const ca = await issueCa({ commonName: 'bench-ca', validityDays: 2, now });
const leaf = await issueLeaf({
  role: 'agent',
  dnsName: 'localhost',
  issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
  validityDays: 1,
  now,
});

const sandbox = await startLocalSandbox({ dir: mkdtempSync(join(tmpdir(), 'bench-sandbox-')) });
const check = { socket: sandbox.socket };

const ratios: Record<string, number> = {};
const sandboxRatios: Record<string, number> = {};
const round2 = (value: number): number => Math.round(value * 100) / 100;
process.stdout.write(
  'ingresses  review p50 ms  review p90 ms  sandbox check p50 ms  bare haproxy -c p50 ms  ratio\n',
);
for (const n of sizes) {
  const snapshot = await snapshotOf(n);
  const config = defaultTemplateConfig();
  const watch = {
    snapshot: () => snapshot,
    templateConfig: () => config,
    ourClassIsDefault: () => false,
  };
  const reviewPipeline = new ConfigPipeline({ ingressClass: 'haptic', check });
  const reviewer = createRoutingReviewer({
    watch,
    pipeline: reviewPipeline,
    ingressClass: 'haptic',
    namespace: 'haptic',
    templateConfigName: 'haptic',
  });
  const server = await startWebhook(
    {
      kinds: routingKindRoutes(reviewer, { namespace: 'haptic', name: 'haptic' }),
      deadlineMs: 30_000,
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
  // As in the controller, the current state was rendered before any review arrives: the
  // first (cold) render of thousands of Ingresses need not fit a review's deadline on a busy
  // machine.
  const warm = await reviewPipeline.run(config, snapshot, new Date());
  if (!warm.ok) throw new Error(warm.message);
  const agent = new Agent({ keepAlive: true, ca: encodeCertificateChain([ca.certificate]) });
  const post = (body: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const call = request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/validate',
          method: 'POST',
          agent,
          servername: 'localhost',
          headers: { 'content-type': 'application/json' },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            resolve(Buffer.concat(chunks).toString());
          });
        },
      );
      call.on('error', reject);
      call.end(body);
    });
  // The bare check: the current state's files, written once, checked by haproxy directly;
  // and the same files through the sandbox. Each round runs a review, a bare check and a
  // sandbox check in turn, so a machine shared with other work slows all three alike.
  const dir = mkdtempSync(join(tmpdir(), 'bench-bare-'));
  for (const file of warm.files) {
    mkdirSync(dirname(join(dir, file.path)), { recursive: true });
    writeFileSync(join(dir, file.path), file.content);
  }
  const times: number[] = [];
  const bare: number[] = [];
  const sandboxed: number[] = [];
  for (let i = 0; i < reviews + 2; i += 1) {
    const object = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { namespace: 'app', name: 'ing1' },
      spec: {
        ingressClassName: 'haptic',
        rules: [
          {
            host: 'h1.example.com',
            http: {
              paths: [
                {
                  path: `/v${i}`,
                  pathType: 'Prefix',
                  backend: { service: { name: 'svc1', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    };
    const body = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: `u${i}`,
        kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
        name: 'ing1',
        namespace: 'app',
        operation: 'UPDATE',
        userInfo: { username: 'bench' },
        object,
        oldObject: object,
      },
    });
    const started = performance.now();
    const answer = await post(body);
    if (!answer.includes('"allowed":true')) throw new Error(answer);
    if (i >= 2) times.push(performance.now() - started);
    const bareStarted = performance.now();
    await execa('haproxy', ['-c', '-q', '-f', join(dir, 'haproxy.cfg')], { cwd: dir });
    if (i >= 2) bare.push(performance.now() - bareStarted);
    const sandboxStarted = performance.now();
    const outcome = await checkBundle(warm.files, check);
    if (!outcome.ok) throw new Error(outcome.message);
    if (i >= 2) sandboxed.push(performance.now() - sandboxStarted);
  }
  rmSync(dir, { recursive: true, force: true });
  agent.destroy();
  await server.close();
  await reviewPipeline.close();
  ratios[String(n)] = round2(median(times) / median(bare));
  sandboxRatios[String(n)] = round2(median(sandboxed) / median(bare));
  const sorted = [...times].sort((a, b) => a - b);
  const p90 = sorted[Math.floor(sorted.length * 0.9)] ?? 0;
  process.stdout.write(
    `${String(n).padStart(9)}  ${median(times).toFixed(1).padStart(13)}  ${p90.toFixed(1).padStart(13)}  ${median(sandboxed).toFixed(1).padStart(20)}  ${median(bare).toFixed(1).padStart(22)}  ${(median(times) / median(bare)).toFixed(2).padStart(5)}\n`,
  );
}
await sandbox.stop();
process.stdout.write(`${JSON.stringify({ ratios, sandboxRatios })}\n`);
