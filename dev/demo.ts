// make demo: the local control plane, `helm install` of the chart (hooks run by the Job
// runner), the chart's haptic-haproxy and haptic-controller Deployments run as local processes
// on loopback, a sample backend behind a Service + EndpointSlice and an Ingress with TLS; then
// the HTTP and HTTPS answers through both HAProxy replicas. Ctrl-C stops everything.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { execa } from 'execa';
import { startLocalCluster } from './lib/local-cluster.ts';
import { startNetnsHost } from './lib/netns-host.ts';
import { projectRoot, toolPath } from './lib/tools.ts';
import { controllerReplica, startHAProxyReplica } from './local-pods/release-pods.ts';

const namespace = 'haptic';
const host = 'demo.localdev.me';
const dir = join(projectRoot, '.demo');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
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

try {
  const cluster = await startLocalCluster(join(dir, 'cluster'));
  stops.push(() => cluster.stop());
  const kubeconfig = cluster.controlPlane.kubeconfigPath;
  const env = { KUBECONFIG: kubeconfig };
  const kubectl = (args: readonly string[], input?: string) =>
    execa(toolPath('kubectl'), args, { env, ...(input === undefined ? {} : { input }) });
  say(`control plane up at ${cluster.controlPlane.server}`);

  await execa(
    toolPath('helm'),
    ['install', 'haptic', join(projectRoot, 'chart'), '-n', namespace, '--create-namespace'],
    { env, stdout: 'inherit', stderr: 'inherit' },
  );
  say('helm install done: CRD, pre-rollout and agent-certificate hooks ran through the Job runner');

  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const pods = {
    kubeConfig: kc,
    namespace,
    dir: join(dir, 'pods'),
    hapticCommand: [process.execPath, join(projectRoot, 'dist/cli/main.js')],
  };
  const replicas = [];
  for (const [i, address] of ['127.0.0.2', '127.0.0.3'].entries()) {
    const replica = await startHAProxyReplica(pods, `haptic-haproxy-${i}`, address);
    stops.push(() => replica.pod.stop());
    replicas.push(replica);
    say(
      `haptic-haproxy-${i}: agent on ${address}:${replica.agentPort}, HAProxy on ${address}:8080/8443`,
    );
  }
  for (const [i, address] of ['127.0.0.11', '127.0.0.12'].entries()) {
    const controller = await controllerReplica(pods, `haptic-controller-${i}`, address, {
      agents: replicas,
    });
    stops.push(() => controller.pod.stop());
    await controller.start();
    say(`haptic-controller-${i}: health ${address}:8080, metrics ${address}:9090`);
  }

  // The sample backend runs on a test host of its own (a network namespace), so its address
  // is an ordinary IPv4 endpoint, as a Pod's would be.
  const backend = await startNetnsHost({
    body: 'hello from the demo backend',
    logFile: join(dir, 'backend.log'),
  });
  stops.push(() => backend.stop());
  const { address: backendAddress, port: backendPort } = backend;
  const certDir = mkdtempSync(join(dir, 'cert-'));
  await execa('openssl', [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
    ...['-keyout', join(certDir, 'tls.key'), '-out', join(certDir, 'tls.crt'), '-days', '7'],
    ...['-subj', `/CN=${host}`, '-addext', `subjectAltName=DNS:${host}`],
  ]);
  await kubectl(['create', 'namespace', 'demo']);
  await kubectl([
    ...['create', 'secret', 'tls', 'demo-tls', '-n', 'demo'],
    `--cert=${join(certDir, 'tls.crt')}`,
    `--key=${join(certDir, 'tls.key')}`,
  ]);
  const objects = [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'demo' },
      spec: { clusterIP: 'None', ports: [{ name: 'http', port: 80, targetPort: backendPort }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'web-1',
        namespace: 'demo',
        labels: { 'kubernetes.io/service-name': 'web' },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: backendPort, protocol: 'TCP' }],
      endpoints: [{ addresses: [backendAddress], conditions: { ready: true } }],
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'web', namespace: 'demo' },
      spec: {
        ingressClassName: 'haptic',
        tls: [{ hosts: [host], secretName: 'demo-tls' }],
        rules: [
          {
            host,
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
    },
  ];
  await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
  say(
    `backend on ${backendAddress}:${backendPort}; Service demo/web, EndpointSlice, Ingress ${host} with TLS`,
  );

  const fetchVia = (address: string, scheme: 'http' | 'https'): Promise<string> =>
    new Promise((resolve) => {
      const options = {
        host: address,
        port: scheme === 'http' ? 8080 : 8443,
        path: '/hello',
        headers: { host },
        agent: false as const,
        timeout: 3_000,
      };
      const done = (response: IncomingMessage): void => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          resolve(`${response.statusCode ?? 0} ${Buffer.concat(chunks).toString()}`);
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
  let answers: string[] = [];
  for (let attempt = 0; attempt < 100; attempt += 1) {
    answers = [];
    for (const replica of replicas) {
      for (const scheme of ['http', 'https'] as const) {
        answers.push(
          `${scheme.padEnd(5)} via ${replica.name} (${replica.address}): ${await fetchVia(replica.address, scheme)}`,
        );
      }
    }
    if (answers.every((answer) => answer.includes(': 200 '))) break;
    await sleep(200);
  }
  say('');
  for (const answer of answers) say(answer);
  say('');
  say(`ready in ${((performance.now() - started) / 1000).toFixed(1)} s. Try:`);
  say(`  export KUBECONFIG=${kubeconfig}`);
  say(`  curl -H 'Host: ${host}' http://127.0.0.2:8080/`);
  say(`  curl -k --resolve ${host}:8443:127.0.0.3 https://${host}:8443/`);
  say('  .tools/bin/kubectl get haproxytemplateconfig -n haptic   # Ready condition');
  say(`  logs: ${join(dir, 'pods')}/<pod>/<container>.log`);
  say('Ctrl-C stops everything.');
  if (process.env.HAPTIC_DEMO_EXIT === '1')
    await stopAll(answers.every((a) => a.includes(': 200 ')) ? 0 : 1);
  await new Promise(() => undefined);
} catch (error) {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  await stopAll(1);
}
