/**
 * The renewal Job's clean-up gated on convergence, on real Pods of the chart (default
 * provider, 2 HAProxy replicas): after a CA rotation the Job (from the CronJob, in a Pod of the
 * product image, with the chart's RBAC) removes previous-ca.crt before the overlap's deadline
 * once every replica reports the new CA and identities in status.tls; while one replica's
 * agent cannot be asked what it loaded (its port 5555 refused inside its own network
 * namespace, so the leader's state requests fail), the Job keeps the previous CA, names that
 * replica and what it last reported, and a later run cleans up once it answers again.
 *
 * The CA is made due without waiting a year: the test re-signs the issuer Secret's CA with its
 * own key for ten days (same subject and key, so every peer keeps verifying): the identities
 * now outlive their CA (CaOutlivedByIdentity), so the policy rotates it.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { containerdSocket } from '../../../dev/lib/node/node-config.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import {
  decodeCertificateChain,
  decodePrivateKey,
  encodeCertificateChain,
  issueCa,
} from '../../../src/pki/index.ts';
import { identitySecretKeys, issuerSecretKeys } from '../../../src/secrets/layout.ts';
import { adminKubeConfig, jobPodLogs, kubectl } from '../../support/cluster.ts';
import { LocalSite, eventually } from '../controller/local-site.ts';

const run = promisify(execFile);
const names = {
  issuer: 'haptic-agent-ca',
  server: 'haptic-agent-server-tls',
  client: 'haptic-agent-client-tls',
} as const;

interface LogLine {
  readonly event?: string;
  readonly action?: string;
  readonly reason?: string;
  readonly converged?: boolean;
  readonly lagging?: readonly { readonly pod: string; readonly role: string }[];
  readonly msg: string;
}

let site: LocalSite;
let jobs = 0;

async function secretData(name: string): Promise<Record<string, string>> {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const secret = await core.readNamespacedSecret({ name, namespace: site.namespace });
  return secret.data ?? {};
}

/** Re-signs the issuer Secret's CA with its own key, valid for ten more days: now outlived. */
async function makeCaDue(): Promise<number> {
  const data = await secretData(names.issuer);
  const [ca] = decodeCertificateChain(Buffer.from(data['tls.crt'] ?? '', 'base64'));
  const keys = decodePrivateKey(Buffer.from(data['tls.key'] ?? '', 'base64'));
  const commonName = ca.subject.replace(/^CN=/, '');
  const due = await issueCa({ commonName, validityDays: 10, now: new Date(), keys });
  const patch = {
    data: { 'tls.crt': Buffer.from(encodeCertificateChain([due.certificate])).toString('base64') },
  };
  const result = await kubectl([
    ...['patch', 'secret', names.issuer, '-n', site.namespace, '--type=merge'],
    ...['-p', JSON.stringify(patch)],
  ]);
  if (result.exitCode !== 0) throw new Error(`patch ${names.issuer}: ${result.stderr}`);
  return Number(Buffer.from(data[issuerSecretKeys.generation] ?? '', 'base64').toString());
}

/** "Run a check immediately": a Job from the CronJob, waited for, its JSON log lines. */
async function renewalJob(): Promise<LogLine[]> {
  jobs += 1;
  const job = `haptic-agent-renewal-gate-${jobs}`;
  const ns = ['-n', site.namespace];
  const created = await kubectl([
    'create',
    'job',
    job,
    '--from=cronjob/haptic-agent-renewal',
    ...ns,
  ]);
  if (created.exitCode !== 0) throw new Error(`create job: ${created.stderr}`);
  const waited = await kubectl([
    ...['wait', '--for=condition=complete', `job/${job}`, ...ns, '--timeout=5m'],
  ]);
  const pods = await jobPodLogs(site.namespace, job);
  const told = pods.map(({ pod, phase, log }) => `--- Pod ${pod} (${phase}):\n${log}`).join('\n');
  if (waited.exitCode !== 0) throw new Error(`job ${job}: ${waited.stderr}\n${told}`);
  // One run is what the decisions below describe: a retried Job is a failure of its own.
  if (pods.length !== 1)
    throw new Error(`job ${job} ran ${String(pods.length)} Pods, not one:\n${told}`);
  return (pods[0]?.log ?? '')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

const decisions = (logs: readonly LogLine[]): LogLine[] =>
  logs.filter((line) => line.event === 'decision');

/** Every Pod recorded what it loaded and matches the Secrets (`haptic certificates status` exits 0). */
async function everyPodConverged(): Promise<void> {
  await eventually(
    'every Pod reports the mounted certificates',
    async () =>
      run(process.execPath, [
        join(projectRoot, 'dist/cli/main.js'),
        ...['certificates', 'status', '-n', site.namespace, '--kubeconfig', inject('kubeconfig')],
      ]).then(
        () => 0,
        (error: unknown) => (error as { code?: number }).code ?? -1,
      ),
    (code) => code === 0,
    120_000,
  );
}

/** Refuses (or accepts again) TCP port 5555 inside the agent container's network namespace. */
async function refuseAgentPort(pod: string, refuse: boolean): Promise<void> {
  const status = JSON.parse(
    (await kubectl(['get', 'pod', pod, '-n', site.namespace, '-o', 'json'])).stdout,
  ) as { status: { initContainerStatuses?: { name: string; containerID?: string }[] } };
  const id = status.status.initContainerStatuses
    ?.find((container) => container.name === 'agent')
    ?.containerID?.replace(/^containerd:\/\//, '');
  if (id === undefined) throw new Error(`pod ${pod} has no agent container`);
  const tasks = await run('ctr', ['--address', containerdSocket, '-n', 'k8s.io', 'tasks', 'ls']);
  const pid = tasks.stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find(([task]) => task === id)?.[1];
  if (pid === undefined) throw new Error(`no task for container ${id}`);
  const rule = ['INPUT', '-p', 'tcp', '--dport', '5555', '-j', 'REJECT'];
  await run('nsenter', ['-t', pid, '-n', 'iptables', refuse ? '-I' : '-D', ...rule]);
}

beforeAll(async () => {
  site = await LocalSite.start('cert-gate', { values: ['--set', 'haproxy.replicas=2'] });
  await site.refreshPods();
  await everyPodConverged();
}, 420_000);

afterAll(async () => {
  await site.stop();
});

describe('renewal Job: previous-CA clean-up gated on convergence', () => {
  it('removes previous-ca.crt before the deadline once every replica reports the new identity', async () => {
    const generation = await makeCaDue();
    const started = Date.now();
    const logs = await renewalJob();
    expect(decisions(logs).map((line) => [line.action, line.reason])).toEqual([
      ['rotate-ca', 'CaOutlivedByIdentity'],
      ['cleanup-previous-ca', 'ReplicasConverged'],
      ['none', 'UpToDate'],
    ]);
    const convergence = logs.find((line) => line.event === 'convergence');
    expect(convergence).toMatchObject({ converged: true, lagging: [] });
    // Well inside the one-hour overlap: the deadline did not do it.
    expect(Date.now() - started).toBeLessThan(10 * 60_000);
    for (const secret of [names.server, names.client]) {
      const data = await secretData(secret);
      expect(data[identitySecretKeys.previousTrust]).toBeUndefined();
      expect(data[identitySecretKeys.previousTrustUntil]).toBeUndefined();
    }
    const issuer = await secretData(names.issuer);
    expect(issuer[issuerSecretKeys.previousCa]).toBeUndefined();
    expect(Buffer.from(issuer[issuerSecretKeys.generation] ?? '', 'base64').toString()).toBe(
      String(generation + 1),
    );
    // Every Pod then loads the cleaned-up Secrets and still authenticates its peers.
    await everyPodConverged();
  }, 600_000);

  it('keeps previous-ca.crt while one replica does not report, names it, and cleans up once it does', async () => {
    const lagging = site.replicas[0];
    if (lagging === undefined) throw new Error('no replica');
    await refuseAgentPort(lagging.name, true);
    let logs: LogLine[];
    try {
      await makeCaDue();
      logs = await renewalJob();
    } finally {
      await refuseAgentPort(lagging.name, false);
    }
    expect(decisions(logs).map((line) => line.action)).toEqual(['rotate-ca', 'none']);
    const convergence = logs.find((line) => line.event === 'convergence');
    expect(convergence?.converged).toBe(false);
    expect(convergence?.lagging).toEqual([{ pod: lagging.name, role: 'agent' }]);
    const last = decisions(logs).at(-1)?.msg ?? '';
    expect(last).toMatch(
      /The previous CA stays trusted until \S+Z and is removed then at the latest/,
    );
    expect(last).toContain(`Pod ${lagging.name} (agent): `);
    expect(last).toMatch(/it reports CA [0-9a-f]{12} and certificate serial [0-9a-f]+\./);
    for (const other of [...site.replicas.slice(1), ...site.controllers])
      expect(last).not.toContain(other.name);
    expect(logs.at(-1)?.msg).toContain('The previous CA stays trusted until');
    for (const secret of [names.server, names.client]) {
      const data = await secretData(secret);
      expect(data[identitySecretKeys.previousTrust]).toBeDefined();
      expect(data[identitySecretKeys.previousTrustUntil]).toBeDefined();
    }

    // It answers again: the next run finds every replica on the new identity and cleans up.
    const next = await renewalJob();
    expect(decisions(next).map((line) => [line.action, line.reason])).toEqual([
      ['cleanup-previous-ca', 'ReplicasConverged'],
      ['none', 'UpToDate'],
    ]);
    expect((await secretData(names.server))[identitySecretKeys.previousTrust]).toBeUndefined();
  }, 600_000);
});
