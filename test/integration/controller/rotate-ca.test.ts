/**
 * `haptic certificates rotate-ca` (dist/cli/main.js on the host, as an operator runs it) on a
 * release of the node with external identities, two replicas of each Deployment and the chart's
 * identity-Secret webhook (failurePolicy Fail). The identities come from the guide's own
 * openssl commands.
 * Expected: refusals (wrong SAN, an unrelated key, a 48 h overlap) before any write, the
 * Secrets' resourceVersions unchanged; a rotation killed (SIGKILL) once it reports the
 * trust distributed, rerun with the same files, resumes and completes while the controller
 * delivers a configuration change every 500 ms — not one failed delivery or reconcile, the
 * webhook denies nothing; a second rotation killed once the identities are replaced resumes
 * too; afterwards the Secrets hold only the new CA and `haptic certificates status` exits 0.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { adminKubeConfig } from '../../support/cluster.ts';
import { type SelfSigned, selfSignedCertificate } from '../../support/self-signed.ts';
import { b64 } from '../../unit/validation/material.ts';
import { createSecretsStep, inNamespace } from '../agent/spec-procedure.ts';
import { type SpecMaterial, specMaterial } from '../agent/test-pki.ts';
import { LocalSite, eventually } from './local-site.ts';
import {
  applied,
  controllerSamples,
  failedDeliveries,
  failedReconciles,
} from './delivery-metrics.ts';
import { type Sample, total } from './prometheus-text.ts';

const agentName = 'agent.example.internal';
const controllerName = 'controller.example.internal';
const serverSecret = 'haptic-agent-identity';
const clientSecret = 'haptic-controller-identity';
const annotation = 'haptic.haproxy.org/ca-rotation';
const host = 'shop.example.com';
const cli = join(projectRoot, 'dist/cli/main.js');
// The project's Node (the one running the tests): .tools/bin/node exists only where the system's
// Node is too old.
const node = process.execPath;

let site: LocalSite;
let original: SpecMaterial;
let serving: SelfSigned[] = [];
const core = () => adminKubeConfig().makeApiClient(CoreV1Api);

function haptic(args: readonly string[]) {
  return execa(node, [cli, 'certificates', ...args, '-n', site.namespace], {
    env: { KUBECONFIG: inject('kubeconfig') },
    reject: false,
    stdin: 'ignore',
  });
}

function rotateArgs(
  material: SpecMaterial,
  extra: readonly string[] = [],
  controllerKey = join(material.dir, 'controller.key'),
): string[] {
  const file = (name: string) => join(material.dir, name);
  return [
    'rotate-ca',
    ...['--ca', file('ca.crt')],
    ...['--agent-cert', file('agent.crt'), '--agent-key', file('agent.key')],
    ...['--controller-cert', file('controller.crt'), '--controller-key', controllerKey],
    ...extra,
  ];
}

interface SecretView {
  readonly resourceVersion: string;
  readonly stage: string | undefined;
  readonly data: Record<string, string>;
}

async function secretView(name: string): Promise<SecretView> {
  const secret = await core().readNamespacedSecret({ name, namespace: site.namespace });
  const record = secret.metadata?.annotations?.[annotation];
  return {
    resourceVersion: secret.metadata?.resourceVersion ?? '',
    stage: record === undefined ? undefined : (JSON.parse(record) as { stage: string }).stage,
    data: secret.data ?? {},
  };
}

const versions = async () =>
  Promise.all([serverSecret, clientSecret].map(async (n) => (await secretView(n)).resourceVersion));

/**
 * Starts rotate-ca and kills it (SIGKILL) as soon as it prints that `stage` completed, then
 * checks that both Secrets record it. The stage line comes after both writes; the next stage
 * waits for the Pods (seconds), so the kill lands between two stages. Watching the Secret
 * instead would race the command's own print (the write is visible before the line is out).
 */
async function killedAfter(material: SpecMaterial, stage: string): Promise<string> {
  const run = haptic(rotateArgs(material));
  const line = new RegExp(`^stage \\d/7 ${stage}:`, 'm');
  let printed = '';
  const reached = await new Promise<boolean>((resolve) => {
    run.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      if (line.test(printed)) resolve(true);
    });
    void run.then(() => {
      resolve(false);
    });
  });
  run.kill('SIGKILL');
  const result = await run;
  expect(reached, `${result.stdout}\n${result.stderr}`).toBe(true);
  for (const name of [serverSecret, clientSecret])
    expect((await secretView(name)).stage, name).toBe(stage);
  return result.stdout;
}

/** The guide's openssl commands for a new CA and identities (names as given). */
function newMaterial(agent = agentName, controller = controllerName): Promise<SpecMaterial> {
  return specMaterial(agent, controller);
}

const secretReviews = (samples: readonly Sample[], verdict: string) =>
  total(
    samples,
    'haptic_webhook_requests_total',
    (l) => l.kind === 'Secret' && l.verdict === verdict,
  );
const metrics = (): Promise<Sample[]> => controllerSamples(site);

beforeAll(async () => {
  original = await specMaterial(agentName, controllerName);
  site = await LocalSite.start('rotate-ca', { controllers: 2, webhook: true });
  // The guide's "Create the two identity Secrets.", then the release switched to them.
  const created = await execa('bash', ['-c', inNamespace(createSecretsStep, site.namespace)], {
    cwd: original.dir,
    env: { KUBECONFIG: inject('kubeconfig'), PATH: process.env.PATH ?? '' },
    reject: false,
  });
  if (created.exitCode !== 0) throw new Error(created.stderr);
  const values = join(site.dir, 'agent-tls-values.yaml');
  writeFileSync(
    values,
    `haproxy:\n  agent:\n    tls:\n      managed: false\n      serverSecretName: ${serverSecret}\n      clientSecretName: ${clientSecret}\n      serverName: ${agentName}\n      clientName: ${controllerName}\n`,
  );
  await site.upgrade(['--values', values]);
  await eventually(
    'two HAProxy replicas',
    async () => {
      await site.refreshPods();
      return site.replicas.length;
    },
    (count) => count === 2,
    120_000,
  );
  await site.addBackend('alpha');
  await site.tlsSecret('shop-tls', host);
  serving = await Promise.all(
    ['a', 'b'].map(() => selfSignedCertificate(host, { parent: site.dir })),
  );
  const backend = { service: { name: 'alpha', port: { number: 80 } } };
  await site.apply(
    site.ingress(
      'shop',
      [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend }] } }],
      {
        tls: [{ hosts: [host], secretName: 'shop-tls' }],
      },
    ),
  );
  await eventually(
    'served on both replicas',
    () => site.everywhere(host, '/', ['https']),
    (answers) => answers.length === 2 && answers.every((a) => a === '200 alpha /'),
    120_000,
  );
  // Every Pod reported its TLS state: the release is converged before the rotations.
  await eventually(
    'certificates status converged',
    () => haptic(['status']),
    (result) => result.exitCode === 0,
    120_000,
  );
}, 600_000);

afterAll(async () => {
  await site.stop();
});

describe('haptic certificates rotate-ca on the node', () => {
  it('refuses a wrong SAN, an unrelated key and a 48 h overlap before any write', async () => {
    const before = await versions();
    const fresh = await newMaterial();
    const wrongName = await newMaterial('wrong.example.internal', controllerName);
    const sans = await haptic(rotateArgs(wrongName));
    expect(sans.exitCode).toBe(1);
    expect(sans.stderr).toContain(`--agent-cert ${join(wrongName.dir, 'agent.crt')}:`);
    expect(sans.stderr).toContain(`the DNS SAN ${agentName}`);

    const unrelated = await haptic(rotateArgs(fresh, [], join(original.dir, 'controller.key')));
    expect(unrelated.exitCode).toBe(1);
    expect(unrelated.stderr).toContain(
      `--controller-key ${join(original.dir, 'controller.key')}: tls.key of Secret ${site.namespace}/${clientSecret} does not belong to the controller certificate`,
    );

    const long = await haptic(rotateArgs(fresh, ['--overlap', '48h']));
    expect(long.exitCode).toBe(1);
    expect(long.stderr).toContain(
      '--overlap 48h: the trust overlap must be longer than zero and at most 24 hours',
    );

    const dry = await haptic(rotateArgs(fresh, ['--dry-run']));
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('plan (dry run, nothing written)');
    expect(dry.stdout).toContain('stage 7/7 complete');
    expect(await versions()).toEqual(before);
  }, 120_000);

  it('resumes a rotation killed after the trust distribution, under load, and converges', async () => {
    const next = await newMaterial();
    const running = { load: true };
    const patchErrors: string[] = [];
    const at0 = await metrics();
    const load = (async () => {
      for (let n = 0; running.load; n++) {
        const pair = serving[n % 2];
        if (pair === undefined) break;
        await core()
          .patchNamespacedSecret({
            name: 'shop-tls',
            namespace: site.namespace,
            body: [
              { op: 'replace', path: '/data/tls.crt', value: b64(pair.cert) },
              { op: 'replace', path: '/data/tls.key', value: b64(pair.key) },
            ],
          })
          .catch((error: unknown) => patchErrors.push(String(error)));
        await sleep(500);
      }
    })();
    try {
      const first = await killedAfter(next, 'trust-distributed');
      expect(first).not.toContain('stage 2/7');
      const rerun = await haptic(rotateArgs(next));
      expect(rerun.exitCode, rerun.stderr).toBe(0);
      const stages = rerun.stdout.split('\n').filter((line) => line.startsWith('stage '));
      expect(stages.map((line) => line.split(':')[0])).toEqual([
        'stage 2/7 trust-loaded',
        'stage 3/7 identities-replaced',
        'stage 4/7 identities-loaded',
        'stage 5/7 exchange-verified',
        'stage 6/7 previous-ca-revoked',
        'stage 7/7 complete',
      ]);
      // Deliveries go on after the rotation.
      const atRotationEnd = await metrics();
      const atEnd = await eventually(
        'deliveries after the rotation',
        metrics,
        (samples) => applied(samples) - applied(atRotationEnd) >= 2,
        60_000,
      );
      running.load = false;
      await load;
      expect(patchErrors).toEqual([]);
      const failures = failedDeliveries(at0, atEnd);
      expect(failures, failures.length === 0 ? '' : await site.failureContext()).toEqual([]);
      expect(failedReconciles(atEnd) - failedReconciles(at0)).toBe(0);
      expect(applied(atRotationEnd) - applied(at0)).toBeGreaterThan(10);
      // Every write went through the webhook and was admitted: 3 data writes and 4 records, each on both Secrets.
      expect(secretReviews(atEnd, 'denied') - secretReviews(at0, 'denied')).toBe(0);
      expect(secretReviews(atEnd, 'allowed') - secretReviews(at0, 'allowed')).toBe(14);

      const newCa = b64(readFileSync(join(next.dir, 'ca.crt')).toString());
      for (const name of [serverSecret, clientSecret]) {
        const view = await secretView(name);
        expect(view.stage).toBe('complete');
        expect(view.data['ca.crt']).toBe(newCa);
        expect(Object.keys(view.data).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
      }
      const status = await haptic(['status']);
      expect(status.exitCode, `${status.stdout}\n${status.stderr}`).toBe(0);
      // The same files again: nothing left to do.
      const again = await haptic(rotateArgs(next));
      expect(again.exitCode).toBe(0);
      expect(again.stdout).toContain('complete');
    } finally {
      running.load = false;
      await load;
    }
  }, 900_000);

  it('resumes a rotation killed after the identity replacement; other files meanwhile are refused', async () => {
    const next = await newMaterial();
    await killedAfter(next, 'identities-replaced');
    const before = await versions();
    const other = await haptic(rotateArgs(await newMaterial()));
    expect(other.exitCode).toBe(1);
    expect(other.stderr).toContain('records a rotation to another CA');
    expect(await versions()).toEqual(before);

    const rerun = await haptic(rotateArgs(next));
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(rerun.stdout).not.toContain('stage 3/7');
    expect(rerun.stdout).toContain('stage 7/7 complete');
    const newCa = b64(readFileSync(join(next.dir, 'ca.crt')).toString());
    for (const name of [serverSecret, clientSecret]) {
      const view = await secretView(name);
      expect(view.data['ca.crt']).toBe(newCa);
      expect(view.data['previous-ca.crt']).toBeUndefined();
    }
    const status = await haptic(['status']);
    expect(status.exitCode, `${status.stdout}\n${status.stderr}`).toBe(0);
  }, 900_000);
});
