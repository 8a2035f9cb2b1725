/**
 * The spec's "Rotate a certificate authority", end to end: external identity Secrets created
 * and patched by the spec's own commands against the real API server, projected into each
 * replica's volume by its own kubelet-like writer with its own delay, while two controller
 * replicas apply to two agents every 200 ms. Expected: not one failed apply, and after the
 * revocation a client holding the old identity is refused, on a reused connection too.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type SecretProjector, projectSecret } from '../../../dev/lib/secret-projector.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { AgentClient, encodeApply } from '../../../src/controller/agent-client.ts';
import { applyToAgents } from '../../../src/controller/agent-fanout.ts';
import { certificateFingerprint, decodeCertificateChain } from '../../../src/pki/index.ts';
import { TlsMaterialWatcher } from '../../../src/tls/material-watcher.ts';
import { adminKubeConfig, createTestNamespace, kubectl } from '../../support/cluster.ts';
import { rawRequest } from './raw-request.ts';
import { Replica } from './replica.ts';
import { type Site, fetchSite, makeSite, siteFiles } from './site.ts';
import {
  createSecretsStep,
  distributeTrustStep,
  generateStep,
  identifyStep,
  inNamespace,
  replaceIdentitiesStep,
  revokeStep,
  waitForIdentitiesStep,
  waitForTrustStep,
  waitProjectedFunction,
} from './spec-procedure.ts';
import { type SpecMaterial, authority, specMaterial } from './test-pki.ts';

const root = mkdtempSync(join(tmpdir(), 'haptic-agent-rotation-'));
const replicas: Replica[] = [];
const controllerDirs = [join(root, 'controller-0'), join(root, 'controller-1')];
const watchers: TlsMaterialWatcher[] = [];
const clients: AgentClient[] = [];
const projectors: SecretProjector[] = [];
let namespace: string;
let material: SpecMaterial;
let site: Site;

/** The two Deployments the spec's commands read names from (no Pods run here). */
function deployments(): string {
  return `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: haptic-haproxy
spec:
  replicas: 2
  selector:
    matchLabels: { app.kubernetes.io/instance: haptic, app.kubernetes.io/component: loadbalancer }
  template:
    metadata:
      labels: { app.kubernetes.io/instance: haptic, app.kubernetes.io/component: loadbalancer }
    spec:
      initContainers:
        - name: agent
          image: haptic:test
          restartPolicy: Always
          args: [agent, --listen=:5555, --tls-dir=/etc/haptic/agent-tls, --tls-client-name=haptic-controller]
          volumeMounts: [{ name: agent-tls, mountPath: /etc/haptic/agent-tls, readOnly: true }]
      containers:
        - name: haproxy
          image: haproxy:test
      volumes:
        - name: agent-tls
          secret: { secretName: haptic-agent-identity }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: haptic-controller
spec:
  replicas: 2
  selector:
    matchLabels: { app.kubernetes.io/instance: haptic, app.kubernetes.io/component: controller }
  template:
    metadata:
      labels: { app.kubernetes.io/instance: haptic, app.kubernetes.io/component: controller }
    spec:
      containers:
        - name: controller
          image: haptic:test
          args: [run, --tls-dir=/etc/haptic/agent-tls]
          env: [{ name: AGENT_TLS_SERVER_NAME, value: haptic-agent }]
          volumeMounts: [{ name: agent-tls, mountPath: /etc/haptic/agent-tls, readOnly: true }]
      volumes:
        - name: agent-tls
          secret: { secretName: haptic-controller-identity }
`;
}

/** Runs spec steps in bash against the test's namespace; returns the variables it prints. */
async function runSpec(
  steps: readonly string[],
  env: Record<string, string>,
): Promise<Record<string, string>> {
  const script = [
    'set -euo pipefail',
    waitProjectedFunction,
    ...steps.map((step) => inNamespace(step, namespace)),
    'printf "%s=%s\\n" rotation_dir "$rotation_dir" server_secret "$server_secret" client_secret "$client_secret"',
  ].join('\n');
  const result = await execa('bash', ['-c', script], {
    env: {
      ...env,
      KUBECONFIG: inject('kubeconfig'),
      PATH: `${join(projectRoot, '.tools/bin')}:${process.env.PATH ?? ''}`,
      TLS_DIRS_loadbalancer: replicas.map((replica) => replica.tlsDir).join(' '),
      TLS_DIRS_controller: controllerDirs.join(' '),
    },
    stdin: 'ignore',
    reject: false,
  });
  if (result.exitCode !== 0)
    throw new Error(`spec steps failed (${String(result.exitCode)}):\n${result.stderr}`);
  return Object.fromEntries(
    result.stdout
      .split('\n')
      .map((line) => /^(\w+)=(.*)$/.exec(line))
      .flatMap((match) => (match === null ? [] : [[match[1] ?? '', match[2] ?? '']])),
  );
}

beforeAll(async () => {
  namespace = await createTestNamespace('agent-rotation');
  material = await specMaterial('haptic-agent', 'haptic-controller');
  site = await makeSite(await authority());
  const created = await execa(
    'bash',
    ['-c', `set -euo pipefail\n${inNamespace(createSecretsStep, namespace)}`],
    {
      cwd: material.dir,
      env: {
        KUBECONFIG: inject('kubeconfig'),
        PATH: `${join(projectRoot, '.tools/bin')}:${process.env.PATH ?? ''}`,
      },
      reject: false,
    },
  );
  expect(created.exitCode, created.stderr).toBe(0);
  const applied = await kubectl(['apply', '-n', namespace, '-f', '-'], deployments());
  expect(applied.exitCode, applied.stderr).toBe(0);

  for (const [index, address] of ['127.0.22.1', '127.0.22.2'].entries()) {
    replicas.push(
      await Replica.create(root, `haproxy-${index}`, address, { clientName: 'haptic-controller' }),
    );
  }
  const kc = adminKubeConfig();
  // Each replica's kubelet applies Secret changes after its own delay.
  projectors.push(
    await projectSecret(kc, namespace, 'haptic-agent-identity', [
      { dir: replicas[0]?.tlsDir ?? '', delayMs: 0 },
      { dir: replicas[1]?.tlsDir ?? '', delayMs: 1_200 },
    ]),
    await projectSecret(kc, namespace, 'haptic-controller-identity', [
      { dir: controllerDirs[0] ?? '', delayMs: 300 },
      { dir: controllerDirs[1] ?? '', delayMs: 800 },
    ]),
  );
  await Promise.all(projectors.map((projector) => projector.settled()));
  for (const replica of replicas) {
    await replica.startAgent();
    await replica.startHAProxy();
  }
  for (const dir of controllerDirs) {
    const watcher = await TlsMaterialWatcher.start({ dir, logger: pino({ level: 'silent' }) });
    watchers.push(watcher);
    clients.push(new AgentClient({ mode: 'mtls', material: watcher, serverName: 'haptic-agent' }));
  }
});

afterAll(async () => {
  for (const client of clients) client.close();
  for (const watcher of watchers) watcher.close();
  await Promise.all(projectors.map((projector) => projector.stop()));
  await Promise.all(replicas.map((replica) => replica.stop()));
  rmSync(root, { recursive: true, force: true });
});

interface ApplyRecord {
  readonly at: number;
  readonly client: number;
  readonly agent: string;
  readonly ok: boolean;
  readonly error?: string;
}

describe('rotating the certificate authority as the spec describes', () => {
  it('never fails an apply, and refuses the old identity afterwards, on a reused connection too', async () => {
    const endpoints = replicas.map((replica) => replica.endpoint());
    const records: ApplyRecord[] = [];
    const loop = { running: true };
    const started = Date.now();
    const applyEvery200ms = async (index: number, client: AgentClient): Promise<void> => {
      while (loop.running) {
        const tick = Date.now();
        // Both controller replicas render the same configuration, a new one every 2 seconds.
        const version = Math.floor((tick - started) / 2_000);
        const results = await applyToAgents(
          client,
          endpoints,
          encodeApply(siteFiles(site, `rotation-${version}`)),
          {
            attempts: 1,
            timeoutMs: 10_000,
          },
        );
        for (const result of results) {
          records.push({
            at: tick - started,
            client: index,
            agent: result.endpoint.name,
            ok: result.ok,
            ...(result.ok ? {} : { error: result.error.message }),
          });
        }
        await sleep(Math.max(0, 200 - (Date.now() - tick)));
      }
    };
    const loops = clients.map((client, index) => applyEvery200ms(index, client));

    // A controller that never receives the new identity keeps one connection alive.
    const [first] = replicas;
    if (first === undefined) throw new Error('no replica');
    const stale = new Agent({
      keepAlive: true,
      maxSockets: 1,
      cert: material.controller.crt,
      key: material.controller.key,
      ca: material.ca,
    });
    const staleRequest = () =>
      rawRequest({ host: first.address, port: first.agentPort, agent: stale });
    try {
      expect(await staleRequest()).toMatchObject({ status: 200, reusedSocket: false });
      await sleep(600);

      const rotationStarted = Date.now() - started;
      const variables = await runSpec(
        [
          identifyStep,
          generateStep,
          distributeTrustStep,
          waitForTrustStep,
          replaceIdentitiesStep,
          waitForIdentitiesStep,
        ],
        {},
      );
      // Within the overlap the old identity still authenticates (previous-ca.crt).
      expect(await staleRequest()).toMatchObject({ status: 200, reusedSocket: true });
      await sleep(600);

      await runSpec([revokeStep], {
        rotation_dir: variables.rotation_dir ?? '',
        server_secret: variables.server_secret ?? '',
        client_secret: variables.client_secret ?? '',
      });
      const revoked = Date.now() - started;
      // Applies go on after the revocation (each one is checked in the sandbox first, so on a
      // loaded machine a few take longer than their 200 ms slot).
      const deadline = Date.now() + 20_000;
      while (records.filter((record) => record.at > revoked).length <= 4 && Date.now() < deadline) {
        await sleep(100);
      }
      loop.running = false;
      await Promise.all(loops);

      const failed = records.filter((record) => !record.ok);
      expect(failed, JSON.stringify(failed.slice(0, 5), null, 2)).toEqual([]);
      // Applies ran before, throughout and after the rotation.
      expect(records.filter((record) => record.at < rotationStarted).length).toBeGreaterThan(4);
      expect(
        records.filter((record) => record.at > rotationStarted && record.at < revoked).length,
      ).toBeGreaterThan(20);
      expect(records.filter((record) => record.at > revoked).length).toBeGreaterThan(4);

      // After revocation: the old identity is refused on its kept-alive connection...
      expect(await staleRequest()).toMatchObject({
        status: 403,
        reusedSocket: true,
        body: { error: { reason: 'Forbidden', code: 'UnknownAuthority' } },
      });
      // ...and on a new one, even by a client that trusts the new CA.
      const newCa = readFileSync(join(variables.rotation_dir ?? '', 'ca.crt'));
      expect(
        await rawRequest({
          host: first.address,
          port: first.agentPort,
          cert: material.controller.crt,
          key: material.controller.key,
          ca: Buffer.concat([material.ca, newCa]),
        }),
      ).toMatchObject({
        status: 403,
        reusedSocket: false,
        body: { error: { code: 'UnknownAuthority' } },
      });

      // Every agent now presents the new identity and trusts only the new CA.
      const newAgent = certificateFingerprint(
        decodeCertificateChain(readFileSync(join(variables.rotation_dir ?? '', 'agent.crt')))[0],
      );
      const newCaFingerprint = certificateFingerprint(decodeCertificateChain(newCa)[0]);
      for (const replica of replicas) {
        const state = await clients[0]?.state(replica.endpoint());
        expect(state?.ok && state.value.tls).toMatchObject({
          valid: true,
          caFingerprints: [newCaFingerprint],
          previousCaFingerprints: [],
          previousCaUntil: null,
          identity: { fingerprint: newAgent },
        });
        expect(await fetchSite(replica, site, 'https')).toMatch(/^200 rotation-\d+ ssl=1$/);
      }
    } finally {
      loop.running = false;
      stale.destroy();
      await Promise.all(loops);
    }
  });
});
