import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { execa } from 'execa';
import { inject } from 'vitest';
import { writeServiceAccountKubeconfig } from '../../dev/lib/kubeconfig.ts';
import { toolPath } from '../../dev/lib/tools.ts';

/** Admin access to the run's shared node. */
export function adminKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  return kc;
}

/** A fresh namespace for one test (names are unique per run). */
export async function createTestNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`.slice(0, 63);
  await adminKubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name } } });
  return name;
}

export interface CommandResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function run(
  command: string,
  args: readonly string[],
  input?: string,
): Promise<CommandResult> {
  const result = await execa(command, args, {
    env: { KUBECONFIG: inject('kubeconfig') },
    reject: false,
    input: input ?? '',
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the pinned kubectl against the shared node; never throws on exit codes. */
export function kubectl(args: readonly string[], input?: string): Promise<CommandResult> {
  return run(toolPath('kubectl'), args, input);
}

/**
 * client-go's informational and warning log lines (klog format, e.g. `I1129 16:54:08.51 30275
 * reflector.go:664] "Warning: watch ended with error" ...`), which Helm 4's status watcher
 * prints when it cancels its own watches. They are not Helm's output; errors (`E...`) stay.
 */
const clientGoNotice = /^[IW]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [\w.-]+:\d+\] .*$/;

/** Runs the pinned helm (v3 by default) against the shared node. */
export async function helm(
  args: readonly string[],
  binary: 'helm' | 'helm4' = 'helm',
): Promise<CommandResult> {
  const result = await run(toolPath(binary), args);
  const stderr = result.stderr
    .split('\n')
    .filter((line) => !clientGoNotice.test(line))
    .join('\n');
  return { ...result, stderr };
}

/** `kubectl logs job/<name>`, the guide's way to read a Job's output; throws when it fails. */
export async function jobLog(namespace: string, name: string): Promise<string> {
  const result = await kubectl(['logs', `job/${name}`, '-n', namespace]);
  if (result.exitCode !== 0) throw new Error(`kubectl logs job/${name}: ${result.stderr}`);
  return result.stdout;
}

/** One Pod a Job ran, oldest first: its name, phase and log. */
export interface JobPodLog {
  readonly pod: string;
  readonly phase: string;
  readonly log: string;
}

/**
 * Every Pod a Job ran, oldest first, each with its own log: `kubectl logs job/<name>` shows
 * one Pod's, which hides that a Job needed a retry (backoffLimit) and what the failed Pod said.
 */
export async function jobPodLogs(namespace: string, name: string): Promise<JobPodLog[]> {
  const listed = await kubectl([
    'get',
    'pods',
    '-n',
    namespace,
    '-l',
    `job-name=${name}`,
    '-o',
    'json',
  ]);
  if (listed.exitCode !== 0) throw new Error(`kubectl get pods of job/${name}: ${listed.stderr}`);
  const pods = (
    JSON.parse(listed.stdout) as {
      items: {
        metadata: { name: string; creationTimestamp: string };
        status: { phase?: string };
      }[];
    }
  ).items.sort((a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp));
  return Promise.all(
    pods.map(async ({ metadata, status }) => {
      const result = await kubectl(['logs', `pod/${metadata.name}`, '-n', namespace]);
      if (result.exitCode !== 0)
        throw new Error(`kubectl logs pod/${metadata.name}: ${result.stderr}`);
      return { pod: metadata.name, phase: status.phase ?? 'Unknown', log: result.stdout };
    }),
  );
}

export interface JobOutcome {
  readonly job: string;
  readonly outcome: 'completed' | 'failed';
}

interface JobEvent {
  readonly metadata: { readonly name: string };
  readonly involvedObject: { readonly name: string };
  readonly reason?: string;
}

/** How long a Job's event may lag behind its condition. */
export const eventArrival = { timeout: 15_000, interval: 250 } as const;

/** The event's time in nanoseconds: its name is `<object>.<UnixNano in hex>`. */
function eventTime(event: JobEvent): bigint {
  return BigInt(`0x${event.metadata.name.split('.').at(-1) ?? '0'}`);
}

/**
 * The Jobs of a namespace that completed or failed, in the order they did, from the Job
 * controller's events (which outlive the Jobs a hook-delete policy removes). The controller
 * records an event after it sets the Job's condition, so helm or `kubectl wait` can return
 * before the event exists: assert with `expect.poll(…, eventArrival)`.
 */
export async function jobOutcomes(namespace: string): Promise<JobOutcome[]> {
  const result = await kubectl([
    'get',
    'events',
    '-n',
    namespace,
    '--field-selector',
    'involvedObject.kind=Job',
    '-o',
    'json',
  ]);
  if (result.exitCode !== 0) throw new Error(`kubectl get events: ${result.stderr}`);
  const outcomes: Record<string, JobOutcome['outcome']> = {
    Completed: 'completed',
    BackoffLimitExceeded: 'failed',
    DeadlineExceeded: 'failed',
  };
  return (JSON.parse(result.stdout) as { items: JobEvent[] }).items
    .sort((a, b) => (eventTime(a) < eventTime(b) ? -1 : 1))
    .flatMap((event) => {
      const outcome = outcomes[event.reason ?? ''];
      return outcome === undefined ? [] : [{ job: event.involvedObject.name, outcome }];
    });
}

/** A kubeconfig file that authenticates only with a ServiceAccount token (no admin certificate). */
export async function serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), 'sa-kubeconfig-')), 'kubeconfig');
  await writeServiceAccountKubeconfig(adminKubeConfig(), namespace, name, path);
  return path;
}
