// make demo: the chart as a user runs it, on the real node (dev/lib/local-node.ts): the product
// image imported, `helm install` (hooks run as Jobs, one of them issuing the webhook's certificate),
// both Deployments rolled out, a sample backend Deployment + Service + TLS Ingress; then the
// webhook's denial of a bad Ingress, the HTTP and HTTPS answers through both HAProxy Pods and
// `kubectl get pods`. Ctrl-C stops everything.
import { mkdirSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { startLocalNode } from './lib/local-node.ts';
import { sampleBackendObjects } from './lib/sample-backend.ts';
import { projectRoot, toolPath } from './lib/tools.ts';

const namespace = 'haptic';
const host = 'demo.localdev.me';
const dir = join(projectRoot, '.demo');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const seconds = (from: number): string => `${((performance.now() - from) / 1000).toFixed(1)} s`;
const started = performance.now();
const stops: (() => Promise<unknown>)[] = [];
let stopping = false;
const stopAll = async (code: number): Promise<never> => {
  if (!stopping) {
    stopping = true;
    say('\nstopping everything the demo started…');
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
  process.exit(code);
};
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

/** A self-signed certificate for the demo host, in `certDir`. */
async function hostCertificate(certDir: string): Promise<void> {
  mkdirSync(certDir, { recursive: true });
  await execa('openssl', [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
    ...['-keyout', join(certDir, 'tls.key'), '-out', join(certDir, 'tls.crt'), '-days', '7'],
    ...['-subj', `/CN=${host}`, '-addext', `subjectAltName=DNS:${host}`],
  ]);
}

function fetchVia(address: string, scheme: 'http' | 'https'): Promise<string> {
  return new Promise((resolve) => {
    const options = {
      host: address,
      port: scheme === 'http' ? 8080 : 8443,
      path: '/',
      headers: { host },
      agent: false as const,
      timeout: 3_000,
    };
    const done = (response: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        const { location } = response.headers;
        const body =
          status >= 300 && status < 400 && location !== undefined
            ? `-> ${location}`
            : Buffer.concat(chunks).toString().trim();
        resolve(`${status} ${body}`);
      });
    };
    const call =
      scheme === 'http'
        ? httpRequest(options, done)
        : httpsRequest({ ...options, servername: host, rejectUnauthorized: false }, done);
    call.on('error', (error) => {
      resolve(`error ${error.message}`);
    });
    call.on('timeout', () => call.destroy(new Error('timeout')));
    call.end();
  });
}

const ingressRule = (path: string): Record<string, unknown> => ({
  host,
  http: {
    paths: [
      { path, pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } },
    ],
  },
});

try {
  const local = await startLocalNode(dir);
  stops.push(() => local.stop());
  const kubeconfig = local.kubeconfigPath;
  const env = { KUBECONFIG: kubeconfig };
  const kubectl = (args: readonly string[], input?: string) =>
    execa(toolPath('kubectl'), args, { env, ...(input === undefined ? {} : { input }) });
  say(`node Ready in ${seconds(started)} at ${local.node.server}; ${local.image} imported`);

  const installed = performance.now();
  // The README's install: the chart issues the webhook's serving certificate itself (a hook Job).
  await execa(
    toolPath('helm'),
    [...['install', 'haptic', join(projectRoot, 'chart'), '-n', namespace], '--create-namespace'],
    { env, stdout: 'inherit', stderr: 'inherit' },
  );
  for (const deployment of ['haptic-controller', 'haptic-haproxy']) {
    await kubectl(['rollout', 'status', `deployment/${deployment}`, '-n', namespace]);
  }
  say(`helm install to all Pods Ready: ${seconds(installed)} (hooks ran as Jobs)`);

  const certDir = join(dir, 'demo-tls');
  await hostCertificate(certDir);
  await kubectl(['create', 'namespace', 'demo']);
  await kubectl([
    ...['create', 'secret', 'tls', 'demo-tls', '-n', 'demo'],
    `--cert=${join(certDir, 'tls.crt')}`,
    `--key=${join(certDir, 'tls.key')}`,
  ]);
  const objects = [
    ...sampleBackendObjects('web', 'demo', local.image),
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'web', namespace: 'demo' },
      spec: {
        ingressClassName: 'haptic',
        tls: [{ hosts: [host], secretName: 'demo-tls' }],
        rules: [ingressRule('/')],
      },
    },
  ];
  await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
  await kubectl(['rollout', 'status', 'deployment/web', '-n', 'demo']);
  say(`backend Deployment demo/web, Service demo/web, Ingress ${host} with TLS`);

  // The webhook (reached through its Service) denies an Ingress whose path HAProxy cannot take.
  const bad = {
    ...objects[2],
    metadata: { name: 'bad', namespace: 'demo' },
    spec: { ingressClassName: 'haptic', rules: [ingressRule('/a b')] },
  };
  const denied = await execa(toolPath('kubectl'), ['apply', '--dry-run=server', '-f', '-'], {
    env,
    input: JSON.stringify(bad),
    reject: false,
  });
  say(`\n$ kubectl apply --dry-run=server -f bad-ingress.yaml   # path "/a b"`);
  say(denied.stderr || denied.stdout);

  const pods = await kubectl([
    ...['get', 'pods', '-n', namespace, '-l', 'app.kubernetes.io/component=loadbalancer'],
    ...['-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.podIP}{"\\n"}{end}'],
  ]);
  const replicas = pods.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name = '', address = ''] = line.split(' ');
      return { name, address };
    });
  let answers: string[] = [];
  for (let attempt = 0; attempt < 150; attempt += 1) {
    answers = [];
    for (const replica of replicas) {
      for (const scheme of ['http', 'https'] as const) {
        answers.push(
          `${scheme.padEnd(5)} via ${replica.name} (${replica.address}): ${await fetchVia(replica.address, scheme)}`,
        );
      }
    }
    // HTTPS served; HTTP redirected to it (308), the default for a TLS host.
    if (answers.every((answer) => /: (200|308) /.test(answer))) break;
    await sleep(200);
  }
  say('');
  for (const answer of answers) say(answer);
  say('\n$ kubectl get pods -A');
  say((await kubectl(['get', 'pods', '-A', '-o', 'wide'])).stdout);
  say('');
  const [first = { address: '' }] = replicas;
  say(`ready in ${seconds(started)}. Try:`);
  say(`  export KUBECONFIG=${kubeconfig}`);
  say(`  curl -H 'Host: ${host}' http://${first.address}:8080/`);
  say(`  curl -k --resolve ${host}:8443:${first.address} https://${host}:8443/`);
  say('  .tools/bin/kubectl logs -n haptic deploy/haptic-controller');
  say('Ctrl-C stops everything.');
  const ok = replicas.length === 2 && answers.every((a) => a.includes(': 200 '));
  if (process.env.HAPTIC_DEMO_EXIT === '1') await stopAll(ok ? 0 : 1);
  await new Promise(() => undefined);
} catch (error) {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  await stopAll(1);
}
