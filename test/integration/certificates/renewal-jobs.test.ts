import { execa } from 'execa';
import { describe, expect, inject, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import {
  createTestNamespace,
  eventArrival,
  jobLog,
  jobOutcomes,
  kubectl,
} from '../../support/cluster.ts';
import { eventually } from '../../support/eventually.ts';
import { apply, renderTemplate } from './chart-objects.ts';
import { names, readSecrets, versions } from './renewal-harness.ts';

/**
 * "Run a check immediately" from the guide's "Monitor renewal failures", verbatim apart from
 * the namespace (`-n haptic` becomes the test's); the Jobs' output is read with
 * `kubectl logs job/<name>` (`jobLog`).
 */
const runNow = `job="haptic-agent-renewal-$(date +%s)"
kubectl create job "$job" --from=cronjob/haptic-agent-renewal -n haptic
kubectl wait --for=condition=complete "job/$job" -n haptic --timeout=5m
echo "$job"
`;

const inspect = `kubectl get cronjob haptic-agent-renewal -n haptic
kubectl get jobs -n haptic --sort-by=.metadata.creationTimestamp
`;

async function shell(
  ns: string,
  script: string,
): Promise<{ exitCode: number | undefined; stdout: string; stderr: string }> {
  const result = await execa(
    'bash',
    ['-euo', 'pipefail', '-c', script.replaceAll('-n haptic', `-n ${ns}`)],
    {
      env: {
        PATH: `${projectRoot}.tools/bin:${process.env.PATH ?? ''}`,
        KUBECONFIG: inject('kubeconfig'),
      },
      reject: false,
    },
  );
  return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
}

/** The guide names each Job by `date +%s`: start the next one in a new second. */
async function nextSecond(): Promise<void> {
  const second = Math.floor(Date.now() / 1000);
  await eventually(
    'the next second',
    () => Promise.resolve(Math.floor(Date.now() / 1000)),
    (now) => now > second,
    2_000,
  );
}

interface JobLogLine {
  readonly event?: string;
  readonly action?: string;
  readonly writes?: number;
  readonly requests?: Record<string, number>;
}

async function logLines(ns: string, job: string): Promise<JobLogLine[]> {
  return (await jobLog(ns, job))
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as JobLogLine);
}

describe("the chart's certificate Jobs", () => {
  it('bootstraps with the chart Job, then runs the renewal CronJob on demand as the guide shows', async () => {
    const ns = await createTestNamespace('certs-jobs');
    await apply(ns, await renderTemplate(ns, 'agent-bootstrap-job.yaml'));
    const bootstrap = await kubectl([
      'wait',
      '--for=condition=complete',
      'job/haptic-agent-bootstrap',
      '-n',
      ns,
      '--timeout=60s',
    ]);
    expect(bootstrap.stdout).toContain('condition met');
    expect((await logLines(ns, 'haptic-agent-bootstrap')).at(-1)).toMatchObject({
      event: 'finished',
      writes: 3,
      requests: { GET: 3, POST: 3 },
    });
    const issued = await readSecrets(ns);

    await apply(ns, await renderTemplate(ns, 'agent-renewal-cronjob.yaml'));
    const inspected = await shell(ns, inspect);
    expect(inspected.exitCode).toBe(0);
    expect(inspected.stdout).toMatch(/^haptic-agent-renewal +0 \* \* \* \* +Etc\/UTC +False/m);
    expect(inspected.stdout).toMatch(/^haptic-agent-bootstrap +Complete +1\/1/m);

    const first = await shell(ns, runNow);
    expect(first.stderr).toBe('');
    expect(first.exitCode).toBe(0);
    const job = first.stdout.split('\n').at(-1) ?? '';
    expect(first.stdout).toContain(`job.batch/${job} condition met`);
    const lines = await logLines(ns, job);
    expect(lines.filter((line) => line.event === 'decision').map((line) => line.action)).toEqual([
      'none',
    ]);
    expect(lines.at(-1)).toMatchObject({ event: 'finished', writes: 0, requests: { GET: 3 } });
    expect(versions(await readSecrets(ns))).toEqual(versions(issued));

    // A failed run: the issuer Secret is gone. Fix it (restore the backup) and rerun.
    const backup = await kubectl(['get', 'secret', names.issuer, '-n', ns, '-o', 'json']);
    await kubectl(['delete', 'secret', names.issuer, '-n', ns]);
    await nextSecond();
    const failing = await shell(
      ns,
      runNow.replace('--for=condition=complete', '--for=condition=failed'),
    );
    expect(failing.exitCode).toBe(0);
    const failed = failing.stdout.split('\n').at(-1) ?? '';
    expect(await jobLog(ns, failed)).toContain(
      `haptic: The issuer Secret ${ns}/${names.issuer} is missing`,
    );
    await expect
      .poll(() => jobOutcomes(ns), eventArrival)
      .toContainEqual({ job: failed, outcome: 'failed' });

    const restored = JSON.parse(backup.stdout) as { metadata: Record<string, unknown> };
    for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'managedFields']) {
      restored.metadata[field] = undefined;
    }
    expect((await kubectl(['create', '-f', '-'], JSON.stringify(restored))).exitCode).toBe(0);
    await nextSecond();
    const rerun = await shell(ns, runNow);
    expect(rerun.exitCode).toBe(0);
  });
});
