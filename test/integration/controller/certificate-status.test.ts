/**
 * `haptic certificates status` on real Pods of the chart (2 HAProxy replicas): exits 0 with one
 * row per Pod once every Pod has recorded what it loaded; exits 1 naming the replica whose
 * agent stops answering (its container paused), and 0 again once it answers; the leader
 * exposes every Pod's CA and expiry as metrics.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { LocalSite, eventually } from './local-site.ts';
import { scrapeMetrics } from './prometheus-text.ts';

let site: LocalSite;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function status(...extra: string[]): Promise<Run> {
  const args = [
    join(projectRoot, 'dist/cli/main.js'),
    ...['certificates', 'status', '-n', site.namespace, '--kubeconfig', inject('kubeconfig')],
    ...extra,
  ];
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, args);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

interface StatusJson {
  readonly converged: boolean;
  readonly pods: readonly {
    readonly pod: string;
    readonly role: string;
    readonly loadedCas: readonly string[];
  }[];
}

beforeAll(async () => {
  site = await LocalSite.start('cert-status', { values: ['--set', 'haproxy.replicas=2'] });
  await site.refreshPods();
}, 300_000);

afterAll(async () => {
  await site.stop();
});

describe('haptic certificates status', () => {
  it('exits 0 with one row per Pod once every Pod recorded its loaded material', async () => {
    const run = await eventually(
      'certificates status exits 0',
      () => status('--output', 'json'),
      (result) => result.code === 0,
      90_000,
    );
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout) as StatusJson;
    expect(report.converged).toBe(true);
    expect(report.pods.map((row) => [row.pod, row.role])).toEqual([
      ...site.controllers.map((pod) => [pod.name, 'controller']),
      ...site.replicas.map((pod) => [pod.name, 'agent']),
    ]);
    const [ca] = report.pods[0]?.loadedCas ?? [];
    expect(ca).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(report.pods.map((row) => row.loadedCas.join()))).toEqual(new Set([ca]));
  });

  it("publishes every Pod's CA and certificate expiry on the leader", async () => {
    const leader = site.controllers[0];
    if (leader === undefined) throw new Error('no controller');
    const samples = await scrapeMetrics(leader.address);
    const pods = (name: string) =>
      samples
        .filter((sample) => sample.name === name)
        .map((sample) => sample.labels.pod)
        .sort();
    const everyPod = [...site.controllers, ...site.replicas].map((pod) => pod.name).sort();
    expect(pods('haptic_tls_certificate_not_after_timestamp_seconds')).toEqual(everyPod);
    expect(pods('haptic_tls_trusted_ca_info')).toEqual(everyPod);
    const expiry = samples.find(
      (sample) => sample.name === 'haptic_tls_certificate_not_after_timestamp_seconds',
    );
    expect(expiry?.value).toBeGreaterThan(Date.now() / 1000);
    expect(
      samples.filter((sample) => sample.name === 'haptic_tls_previous_ca_until_timestamp_seconds'),
    ).toEqual([]);
  });

  it('exits 1 naming a replica whose agent stopped answering, and 0 once it answers again', async () => {
    const lagging = site.replicas[0];
    if (lagging === undefined) throw new Error('no replica');
    await site.container(lagging.name, 'agent', 'pause');
    try {
      const run = await eventually(
        'certificates status exits 1 for the paused agent',
        () => status(),
        (result) => result.code === 1,
        60_000,
      );
      expect(run.stderr).toContain(lagging.name);
      const row = run.stdout.split('\n').find((line) => line.startsWith(lagging.name));
      expect(row).toContain('not converged: The last state request failed');
      for (const other of site.replicas.slice(1))
        expect(run.stdout.split('\n').find((line) => line.startsWith(other.name))).toMatch(
          / converged$/,
        );
    } finally {
      await site.container(lagging.name, 'agent', 'resume');
    }
    await eventually(
      'certificates status exits 0 again',
      () => status(),
      (result) => result.code === 0,
      60_000,
    );
  });

  it('exits 2 with a clear message on a usage error', async () => {
    const run = await status('--within', 'soon');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--within must be a duration such as 30d or 720h, not "soon"');
  });
});
