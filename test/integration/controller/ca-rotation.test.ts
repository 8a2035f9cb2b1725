/**
 * agent-certificates.txt on a release of the node with external identities, as an operator
 * runs it: "Supply external identities" (the spec's own `kubectl create secret` commands, then
 * the release switched to them, the guide's "For an existing release"), then "Rotate a
 * certificate authority" verbatim, its wait_projected exec'ing into the real Pods of both
 * Deployments (two replicas each) while the kubelet projects each Secret change after its own
 * delay. Throughout, every 200 ms the test replaces the certificate of a TLS Ingress (the
 * controllers must render, check and deliver it) and asks both HAProxy replicas over HTTP and
 * HTTPS.
 * Expected: not one failed delivery or reconcile (the controllers' metrics), the
 * HAProxyTemplateConfig Ready throughout, not one failed request; the chart's identity-Secret
 * webhook (failurePolicy Fail) admits every write of the guide and denies the same CA change
 * split into two plain writes; after the revocation the old controller identity is refused,
 * on a reused connection too.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import {
  templateConfigGroup,
  templateConfigPlural,
  templateConfigVersion,
} from '../../../src/api/template-config.ts';
import { certificateFingerprint, decodeCertificateChain } from '../../../src/pki/index.ts';
import { adminKubeConfig, kubectl } from '../../support/cluster.ts';
import { type SelfSigned, selfSignedCertificate } from '../../support/self-signed.ts';
import { b64, makeCa, pem } from '../../unit/validation/material.ts';
import { type RawAnswer, rawRequest } from '../agent/raw-request.ts';
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
} from '../agent/spec-procedure.ts';
import { type SpecMaterial, specMaterial } from '../agent/test-pki.ts';
import { type HAProxyReplica, LocalSite, eventually } from './local-site.ts';
import { ProjectionObserver } from './projection-observer.ts';
import {
  applied,
  controllerSamples,
  failedDeliveries,
  failedReconciles,
} from './delivery-metrics.ts';
import { type Sample, total } from './prometheus-text.ts';

/** The example names of "Supply external identities". */
const agentName = 'agent.example.internal';
const controllerName = 'controller.example.internal';
const serverSecret = 'haptic-agent-identity';
const clientSecret = 'haptic-controller-identity';

/**
 * "Write the TLS values." (agent-tls-values.yaml; the spec names its keys in the chart's
 * values: external mode, both Secret names, both SANs).
 */
const agentTlsValues = `haproxy:
  agent:
    tls:
      managed: false
      serverSecretName: ${serverSecret}
      clientSecretName: ${clientSecret}
      serverName: ${agentName}
      clientName: ${controllerName}
`;

const host = 'shop.example.com';
const backend = { service: { name: 'alpha', port: { number: 80 } } };
/** The two certificates the load puts in turn into the Ingress's TLS Secret. */
let servingCertificates: SelfSigned[] = [];
let site: LocalSite;
let material: SpecMaterial;

interface SpecRun {
  readonly variables: Record<string, string>;
  readonly stderr: string;
  readonly ms: number;
}

/** Runs spec steps in bash against the site's namespace; returns the variables they set. */
async function runSpec(
  steps: readonly string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<SpecRun> {
  const started = Date.now();
  const script = [
    'set -euo pipefail',
    ...[waitProjectedFunction, ...steps].map((step) => inNamespace(step, site.namespace)),
    'printf "%s=%s\\n" rotation_dir "${rotation_dir-}" server_secret "${server_secret-}" client_secret "${client_secret-}"',
  ].join('\n');
  const result = await execa('bash', ['-c', script], {
    ...(cwd === undefined ? {} : { cwd }),
    env: {
      ...env,
      KUBECONFIG: inject('kubeconfig'),
      PATH: `${join(projectRoot, '.tools/bin')}:${process.env.PATH ?? ''}`,
    },
    stdin: 'ignore',
    reject: false,
  });
  if (result.exitCode !== 0)
    throw new Error(`spec steps failed (${String(result.exitCode)}):\n${result.stderr}`);
  const variables = Object.fromEntries(
    result.stdout
      .split('\n')
      .map((line) => /^(\w+)=(.*)$/.exec(line))
      .flatMap((match) => (match === null ? [] : [[match[1] ?? '', match[2] ?? '']])),
  );
  return { variables, stderr: result.stderr, ms: Date.now() - started };
}

function denial(stderr: string): string {
  const marker = 'denied the request: ';
  return stderr.includes(marker)
    ? stderr.slice(stderr.indexOf(marker) + marker.length).trim()
    : `not denied: ${stderr}`;
}

function patchCa(secret: string, trust: string, dryRun = false) {
  return kubectl([
    ...['patch', 'secret', secret, '-n', site.namespace, '--type=merge'],
    ...(dryRun ? ['--dry-run=server'] : []),
    ...['-p', JSON.stringify({ data: { 'ca.crt': b64(trust) } })],
  ]);
}

async function caOf(secret: string): Promise<string> {
  const got = await kubectl([
    ...['get', 'secret', secret, '-n', site.namespace],
    ...['-o', 'jsonpath={.data.ca\\.crt}'],
  ]);
  return Buffer.from(got.stdout, 'base64').toString();
}

/** The Ready condition of the release's HAProxyTemplateConfig, as `status reason`. */
async function readyCondition(custom: CustomObjectsApi): Promise<string> {
  const config = (await custom.getNamespacedCustomObject({
    group: templateConfigGroup,
    version: templateConfigVersion,
    namespace: site.namespace,
    plural: templateConfigPlural,
    name: 'haptic',
  })) as { status?: { conditions?: { type: string; status: string; reason: string }[] } };
  const ready = config.status?.conditions?.find((condition) => condition.type === 'Ready');
  return ready === undefined ? 'absent' : `${ready.status} ${ready.reason}`;
}

const metrics = (): Promise<Sample[]> => controllerSamples(site);

const secretReviews = (samples: readonly Sample[], verdict: string): number =>
  total(
    samples,
    'haptic_webhook_requests_total',
    (labels) => labels.kind === 'Secret' && labels.verdict === verdict,
  );

/** The SHA-256 fingerprint of the certificate a replica's HAProxy serves for `host`. */
function servedFingerprint(replica: HAProxyReplica): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: replica.address, port: 8443, servername: host, rejectUnauthorized: false },
      () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.destroy();
      },
    );
    socket.on('error', reject);
  });
}

beforeAll(async () => {
  material = await specMaterial(agentName, controllerName);
  // LocalSite.start installs right after creating the namespace, before any Secret of ours
  // can exist there, so the release starts with the default provider and takes the external
  // identities by the guide's path "For an existing release" (new Secret names, a rollout).
  site = await LocalSite.start('ca-rotation', { controllers: 2, webhook: true });
  // "Create the two identity Secrets." in the directory of the issuer's files.
  await runSpec([createSecretsStep], {}, material.dir);
  // "Include the file when installing or upgrading the release."
  const values = join(site.dir, 'agent-tls-values.yaml');
  writeFileSync(values, agentTlsValues);
  await site.upgrade(['--values', values]);
  // The replaced Pods stay Ready while they terminate.
  await eventually(
    'two Pods of each Deployment',
    async () => {
      await site.refreshPods();
      return [site.replicas.length, site.controllers.length];
    },
    (counts) => counts.every((count) => count === 2),
    120_000,
  );

  await site.addBackend('alpha');
  await site.tlsSecret('shop-tls', host);
  servingCertificates = await Promise.all(
    ['a', 'b'].map(() => selfSignedCertificate(host, { parent: site.dir })),
  );
  await site.apply(
    site.ingress(
      'shop',
      [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend }] } }],
      { tls: [{ hosts: [host], secretName: 'shop-tls' }] },
      // HTTP served too (no redirect to HTTPS), so the load below asks both schemes.
      { 'nginx.ingress.kubernetes.io/ssl-redirect': 'false' },
    ),
  );
  await eventually(
    'served on both replicas',
    () => site.everywhere(host),
    (answers) => answers.length === 4 && answers.every((answer) => answer === '200 alpha /'),
    120_000,
  );
  // The API server takes up the upgraded registration asynchronously: wait until it sends the
  // identity Secrets to the webhook (a dry run is reviewed, and changes nothing).
  const attacker = await makeCa('haptic-agent-ca', { at: new Date() });
  await eventually(
    'the identity-Secret webhook reviews',
    () => patchCa(serverSecret, pem(attacker.certificate), true),
    (result) => result.stderr.includes('denied the request'),
    60_000,
  );
}, 600_000);

afterAll(async () => {
  await site.stop();
});

describe("the guide's CA rotation on the node, under load", () => {
  it('registers the identity-Secret webhook with failurePolicy Fail for both Secrets', async () => {
    const list = JSON.parse(
      (await kubectl(['get', 'validatingwebhookconfigurations', '-o', 'json'])).stdout,
    ) as {
      items: {
        webhooks?: {
          name: string;
          failurePolicy: string;
          clientConfig: { service?: { namespace: string } };
          matchConditions?: { expression: string }[];
        }[];
      }[];
    };
    const hook = list.items
      .flatMap((item) => item.webhooks ?? [])
      .find(
        (webhook) =>
          webhook.name === 'agent-identity-secrets.haptic.haproxy.org' &&
          webhook.clientConfig.service?.namespace === site.namespace,
      );
    expect(hook?.failurePolicy).toBe('Fail');
    expect(hook?.matchConditions?.map((condition) => condition.expression)).toEqual([
      `request.name in ["${serverSecret}","${clientSecret}"]`,
    ]);
  });

  it('denies replacing the CA in two plain writes, at each write', async () => {
    const attacker = await makeCa('haptic-agent-ca', { at: new Date() });
    const beside = await patchCa(serverSecret, material.ca.toString() + pem(attacker.certificate));
    expect(beside.exitCode).not.toBe(0);
    expect(denial(beside.stderr)).toMatch(
      new RegExp(
        `^ca\\.crt of Secret ${site.namespace}/${serverSecret} adds the CA CN=haptic-agent-ca, which is neither a CA the Secret trusts now \\(CN=haptic-agent-ca\\) nor a renewal of one`,
      ),
    );
    const alone = await patchCa(serverSecret, pem(attacker.certificate));
    expect(alone.exitCode).not.toBe(0);
    expect(denial(alone.stderr)).toContain('a new CA enters only by a rotation');
    expect(await caOf(serverSecret)).toBe(material.ca.toString());
  });

  it('never fails an apply or a request, and refuses the old identity after revocation', async () => {
    const kc = adminKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const [first] = site.replicas;
    if (first === undefined) throw new Error('no replica');
    let rotationDir = '';
    const pods = [...site.replicas, ...site.controllers].map((pod) => pod.uid).sort();
    const observer = await ProjectionObserver.start(kc, site.namespace, [
      ...site.replicas.map((pod) => ({
        secret: serverSecret,
        pod: pod.name,
        container: 'agent',
      })),
      ...site.controllers.map((pod) => ({
        secret: clientSecret,
        pod: pod.name,
        container: 'controller',
      })),
    ]);

    await eventually(
      'Ready before the load',
      () => readyCondition(custom),
      (text) => text === 'True Delivered',
      60_000,
    );
    const started = Date.now();
    const at0 = await metrics();

    // Every 200 ms: the other certificate for the controllers to deliver, and both replicas
    // asked over HTTP and HTTPS.
    interface Tick {
      readonly at: number;
      readonly certificate: number;
      readonly patchError: string | undefined;
      readonly answers: readonly string[];
      readonly ready: string;
      /** How long the write, the requests and the condition read took together. */
      readonly ms: number;
    }
    const ticks: Tick[] = [];
    const running = { load: true, ping: true };
    const ask = (replica: HAProxyReplica, scheme: 'http' | 'https') =>
      site.fetch(replica, scheme, host, '/').then(
        (answer) => `${String(answer.status)} ${answer.body}`,
        (error: unknown) => `0 ${String(error)}`,
      );
    const tick = async (n: number, at: number): Promise<void> => {
      const certificate = n % 2;
      const pair = servingCertificates[certificate];
      if (pair === undefined) throw new Error('no serving certificate');
      const [patchError, answers, ready] = await Promise.all([
        core
          .patchNamespacedSecret({
            name: 'shop-tls',
            namespace: site.namespace,
            body: [
              { op: 'replace', path: '/data/tls.crt', value: b64(pair.cert) },
              { op: 'replace', path: '/data/tls.key', value: b64(pair.key) },
            ],
          })
          .then(
            () => undefined,
            (error: unknown) => String(error),
          ),
        Promise.all(
          site.replicas.flatMap((replica) => [ask(replica, 'http'), ask(replica, 'https')]),
        ),
        readyCondition(custom).catch((error: unknown) => `unreadable ${String(error)}`),
      ]);
      ticks.push({ at, certificate, patchError, answers, ready, ms: Date.now() - at });
    };
    // A tick starts every 200 ms whether or not the previous one finished (ticks are recorded
    // as they finish). This process's own stalls are measured, to tell them from a load that
    // stopped when a gap is too long.
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    const load = (async () => {
      const pending: Promise<void>[] = [];
      const first = Date.now();
      for (let n = 1; running.load; n++) {
        pending.push(tick(n, Date.now()));
        await sleep(Math.max(0, first + n * 200 - Date.now()));
      }
      await Promise.all(pending);
    })();

    // A controller that never receives the new identity keeps one connection to an agent.
    const stale = new Agent({
      keepAlive: true,
      maxSockets: 1,
      cert: material.controller.crt,
      key: material.controller.key,
      ca: material.ca,
    });
    const staleRequest = () =>
      rawRequest({
        host: first.address,
        port: first.agentPort,
        servername: agentName,
        agent: stale,
      });
    const pings: (RawAnswer & { readonly at: number })[] = [];
    const ping = (async () => {
      while (running.ping) {
        const at = Date.now();
        const answer = await staleRequest().catch((error: unknown): RawAnswer => ({
          status: 0,
          body: String(error),
          reusedSocket: false,
        }));
        pings.push({ at, ...answer });
        await sleep(1_000);
      }
    })();

    try {
      // Deliveries run before the rotation starts.
      const atRotation = await eventually(
        'deliveries before the rotation',
        metrics,
        (samples) => applied(samples) - applied(at0) >= 4,
        60_000,
      );
      const rotationStarted = Date.now();
      const trust = await runSpec([
        identifyStep,
        generateStep,
        distributeTrustStep,
        waitForTrustStep,
      ]);
      const { variables } = trust;
      rotationDir = variables.rotation_dir ?? '';
      const identities = await runSpec([replaceIdentitiesStep, waitForIdentitiesStep], variables);
      running.ping = false;
      await ping;
      // Within the overlap the old identity still authenticates (previous-ca.crt), on the
      // connection it opened before the rotation.
      expect(pings[0]).toMatchObject({ status: 200, reusedSocket: false });
      expect(pings.slice(1).filter((p) => p.status !== 200 || !p.reusedSocket)).toEqual([]);

      const revokeStarted = Date.now();
      const revoke = await runSpec([revokeStep], variables);
      const revoked = Date.now();
      const atRevocation = await metrics();
      for (const run of [trust, identities, revoke]) expect(run.stderr).not.toContain('denied');

      // Deliveries go on after the revocation.
      const atEnd = await eventually(
        'deliveries after the revocation',
        metrics,
        (samples) => applied(samples) - applied(atRevocation) >= 4,
        60_000,
      );
      running.load = false;
      await load;
      stalls.disable();
      const ended = Date.now();
      // Writes overlap, so the last one the API server took is the one to see served.
      const last = (
        await core.readNamespacedSecret({ name: 'shop-tls', namespace: site.namespace })
      ).data?.['tls.crt'];
      if (last === undefined) throw new Error('the TLS Secret lost its certificate');
      const lastFingerprint = certificateFingerprint(
        decodeCertificateChain(Buffer.from(last, 'base64'))[0],
      );

      // Not one failed delivery or reconcile, by either controller, from the first tick on.
      const failures = failedDeliveries(at0, atEnd);
      expect(failures, failures.length === 0 ? '' : await site.failureContext()).toEqual([]);
      expect(failedReconciles(atEnd) - failedReconciles(at0)).toBe(0);
      const appliedBefore = applied(atRotation) - applied(at0);
      const appliedDuring = applied(atRevocation) - applied(atRotation);
      const appliedAfter = applied(atEnd) - applied(atRevocation);
      expect(appliedBefore).toBeGreaterThanOrEqual(4);
      expect(appliedDuring).toBeGreaterThan(20);
      expect(appliedAfter).toBeGreaterThanOrEqual(4);
      // The same Pods (and counters) from start to end.
      await site.refreshPods();
      expect([...site.replicas, ...site.controllers].map((pod) => pod.uid).sort()).toEqual(pods);

      // Every write of the guide went through the webhook and was admitted.
      expect(secretReviews(atRevocation, 'allowed') - secretReviews(atRotation, 'allowed')).toBe(6);
      expect(secretReviews(atRevocation, 'denied') - secretReviews(atRotation, 'denied')).toBe(0);

      // Not one failed write, request or Ready condition.
      expect(ticks.filter((t) => t.patchError !== undefined)).toEqual([]);
      expect(
        ticks.flatMap((t) => t.answers.filter((a) => a !== '200 alpha /')).slice(0, 5),
      ).toEqual([]);
      expect(ticks.filter((t) => t.ready !== 'True Delivered').slice(0, 5)).toEqual([]);
      // The load ran all along the rotation: a tick every 200 ms as scheduled, and never a
      // second without one starting beyond the time this process itself could not run (a busy
      // machine may stall it, then start a few late, bunched). Ticks are recorded as they
      // finish, so their starts are put in order first.
      const during = ticks.filter((t) => t.at >= rotationStarted && t.at < revoked);
      const starts = [rotationStarted, ...during.map((t) => t.at).sort((a, b) => a - b), revoked];
      const gaps = starts.slice(1).map((at, i) => at - (starts[i] ?? at));
      const longestStallMs = stalls.max / 1e6;
      expect(
        Math.max(...gaps),
        `the longest time this test's own process could not run: ${String(longestStallMs)} ms`,
      ).toBeLessThanOrEqual(1_000 + longestStallMs);
      expect(during.length).toBeGreaterThanOrEqual(((revoked - rotationStarted) / 200) * 0.9);

      // The last certificate the load wrote is served by both replicas.
      await eventually(
        'the last certificate served',
        () => Promise.all(site.replicas.map(servedFingerprint)),
        (served) => served.every((fingerprint) => fingerprint === lastFingerprint),
      );

      // After revocation: the old identity is refused on its kept-alive connection...
      const refused = await eventually(
        'the old identity refused',
        staleRequest,
        (answer) => answer.status !== 200,
        10_000,
      );
      expect(refused).toMatchObject({
        status: 403,
        reusedSocket: true,
        body: { error: { reason: 'Forbidden', code: 'UnknownAuthority' } },
      });
      // ...and on a new one, even by a client that trusts the new CA.
      const newCa = readFileSync(join(rotationDir, 'ca.crt'));
      for (const replica of site.replicas) {
        expect(
          await rawRequest({
            host: replica.address,
            port: replica.agentPort,
            servername: agentName,
            cert: material.controller.crt,
            key: material.controller.key,
            ca: Buffer.concat([material.ca, newCa]),
          }),
        ).toMatchObject({ status: 403, body: { error: { code: 'UnknownAuthority' } } });
      }

      // Every agent presents the new identity and trusts only the new CA.
      const newAgent = certificateFingerprint(
        decodeCertificateChain(readFileSync(join(rotationDir, 'agent.crt')))[0],
      );
      const newCaFingerprint = certificateFingerprint(decodeCertificateChain(newCa)[0]);
      for (const secret of [serverSecret, clientSecret]) {
        expect(await caOf(secret)).toBe(newCa.toString());
      }
      for (const replica of site.replicas) {
        const state = await rawRequest({
          host: replica.address,
          port: replica.agentPort,
          servername: agentName,
          cert: readFileSync(join(rotationDir, 'controller.crt')),
          key: readFileSync(join(rotationDir, 'controller.key')),
          ca: newCa,
        });
        expect(state).toMatchObject({
          status: 200,
          body: {
            tls: {
              valid: true,
              caFingerprints: [newCaFingerprint],
              previousCaFingerprints: [],
              previousCaUntil: null,
              identity: { fingerprint: newAgent },
            },
          },
        });
      }

      const delays = observer.delays();
      // Three writes per Secret, each projected into both Pods that mount it.
      expect(delays).toHaveLength(12);
      const requests = ticks.reduce((sum, t) => sum + t.answers.length, 0);
      const duringRequests = during.reduce((sum, t) => sum + t.answers.length, 0);
      console.log(
        JSON.stringify(
          {
            rotationMs: revoked - rotationStarted,
            stagesMs: { trust: trust.ms, identities: identities.ms, revoke: revoke.ms },
            revokeStartedMs: revokeStarted - rotationStarted,
            loadMs: ended - started,
            writes: { total: ticks.length, duringRotation: during.length },
            longestTickGapMs: Math.max(...gaps),
            longestStallMs,
            tickMs: {
              median: [...ticks].sort((a, b) => a.ms - b.ms)[ticks.length >> 1]?.ms,
              max: Math.max(...ticks.map((t) => t.ms)),
            },
            requests: { total: requests, duringRotation: duringRequests },
            applied: { before: appliedBefore, during: appliedDuring, after: appliedAfter },
            projectionDelaysMs: delays.map(
              (d) => `${d.secret} rv${d.resourceVersion} ${d.pod}: ${String(d.ms)}`,
            ),
          },
          null,
          2,
        ),
      );
    } finally {
      running.load = false;
      running.ping = false;
      stalls.disable();
      stale.destroy();
      await Promise.all([load, ping]);
      await observer.stop();
      // "Remove the temporary private keys ..."
      if (rotationDir !== '') rmSync(rotationDir, { recursive: true, force: true });
    }
  }, 900_000);
});
