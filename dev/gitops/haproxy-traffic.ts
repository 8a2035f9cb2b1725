/**
 * Traffic through the release's HAProxy Pods, by Pod IP: a sample backend (the product
 * image's Node, dev/lib/sample-backend.ts) behind an Ingress with TLS for the application
 * host, HTTPS on :8443 (SNI = the host) served and HTTP on :8080 redirected to it (308, the
 * default for a TLS host) through every replica, once or in rounds for as long as a phase runs.
 */
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sampleBackendObjects } from '../lib/sample-backend.ts';
import type { ClusterCli } from './cluster-cli.ts';
import type { HAProxyPod } from './release-snapshot.ts';
import { applicationHost } from './stable-secrets.ts';

export const applicationNamespace = 'gitops-app';
const backendName = 'gitops-app';
const schemes = ['http', 'https'] as const;

export interface TrafficCheck {
  readonly phase: string;
  readonly moment: 'during' | 'after';
  readonly pod: string;
  readonly address: string;
  readonly scheme: 'http' | 'https';
  /** `<status> <body>` (`<status> -> <Location>` for a redirect), or `error <message>`. */
  readonly answer: string;
  readonly ok: boolean;
}

/** The backend, its Service, a TLS Secret (the frontend certificate) and the Ingress. */
export async function deployApplication(
  cli: ClusterCli,
  image: string,
  certificateDir: string,
): Promise<void> {
  const ns = applicationNamespace;
  const manifest = await cli.kubectl([
    ...['create', 'namespace', ns, '--dry-run=client', '-o', 'yaml'],
  ]);
  await cli.kubectl(['apply', '-f', '-'], manifest);
  const secret = await cli.kubectl([
    ...['create', 'secret', 'tls', 'gitops-app-tls', '-n', ns, '--dry-run=client', '-o', 'yaml'],
    `--cert=${join(certificateDir, 'tls.crt')}`,
    `--key=${join(certificateDir, 'tls.key')}`,
  ]);
  await cli.kubectl(['apply', '-f', '-'], secret);
  const ingress = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: backendName, namespace: ns },
    spec: {
      ingressClassName: 'haptic',
      tls: [{ hosts: [applicationHost], secretName: 'gitops-app-tls' }],
      rules: [
        {
          host: applicationHost,
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: backendName, port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  };
  const items = [...sampleBackendObjects(backendName, ns, image), ingress];
  await cli.kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
  );
  await cli.kubectl(['rollout', 'status', `deployment/${backendName}`, '-n', ns, '--timeout=3m']);
}

function get(address: string, scheme: 'http' | 'https'): Promise<string> {
  return new Promise((resolve) => {
    const options = {
      host: address,
      port: scheme === 'http' ? 8080 : 8443,
      path: '/',
      headers: { host: applicationHost },
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
            : Buffer.concat(chunks).toString();
        resolve(`${String(status)} ${body}`);
      });
    };
    const call =
      scheme === 'http'
        ? httpRequest(options, done)
        : httpsRequest(
            { ...options, servername: applicationHost, rejectUnauthorized: false },
            done,
          );
    call.on('error', (error) => {
      resolve(`error ${error.message}`);
    });
    call.on('timeout', () => call.destroy(new Error('timeout')));
    call.end();
  });
}

/** One request per replica and scheme. */
export async function checkTraffic(
  pods: readonly HAProxyPod[],
  phase: string,
  moment: 'during' | 'after',
): Promise<TrafficCheck[]> {
  const checks: TrafficCheck[] = [];
  for (const pod of pods) {
    for (const scheme of schemes) {
      const answer = await get(pod.address, scheme);
      const ok =
        answer ===
        (scheme === 'http' ? `308 -> https://${applicationHost}/` : `200 ${backendName} /`);
      checks.push({ phase, moment, pod: pod.name, address: pod.address, scheme, answer, ok });
    }
  }
  return checks;
}

export interface TrafficProbe {
  /** Stops probing; every check made, failed or not (failures in full, successes counted). */
  stop(): Promise<{ rounds: number; failures: TrafficCheck[] }>;
}

/** Checks every replica and scheme in rounds (one every 500 ms) until stopped. */
export function probeTraffic(pods: readonly HAProxyPod[], phase: string): TrafficProbe {
  const state = { running: true, rounds: 0, failures: [] as TrafficCheck[] };
  const loop = (async () => {
    while (state.running) {
      const checks = await checkTraffic(pods, phase, 'during');
      state.rounds += 1;
      state.failures.push(...checks.filter((check) => !check.ok));
      await sleep(500);
    }
  })();
  return {
    async stop() {
      state.running = false;
      await loop;
      return { rounds: state.rounds, failures: state.failures };
    },
  };
}
