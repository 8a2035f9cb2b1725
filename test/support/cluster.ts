import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { execa } from 'execa';
import { inject } from 'vitest';
import { writeServiceAccountKubeconfig } from '../../dev/lib/kubeconfig.ts';
import { toolPath } from '../../dev/lib/tools.ts';

/** Admin access to the run's shared control plane. */
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

/** Runs the pinned kubectl against the shared control plane; never throws on exit codes. */
export function kubectl(args: readonly string[], input?: string): Promise<CommandResult> {
  return run(toolPath('kubectl'), args, input);
}

/**
 * client-go's informational and warning log lines (klog format, e.g. `I1129 16:54:08.51 30275
 * reflector.go:664] "Warning: watch ended with error" ...`), which Helm 4's status watcher
 * prints when it cancels its own watches. They are not Helm's output; errors (`E...`) stay.
 */
const clientGoNotice = /^[IW]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [\w.-]+:\d+\] .*$/;

/** Runs the pinned helm (v3 by default) against the shared control plane. */
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

export interface RunnerEntry {
  readonly job: string;
  readonly exitCode: number;
  readonly message: string;
}

/** The Jobs the hook-Job runner ran, in order (optionally only one namespace's). */
export function runnerEntries(namespace?: string): RunnerEntry[] {
  return readFileSync(inject('runnerLog'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Partial<RunnerEntry>)
    .flatMap(({ job, exitCode, message }) =>
      job === undefined || exitCode === undefined || message === undefined
        ? []
        : [{ job, exitCode, message }],
    )
    .filter((e) => namespace === undefined || e.job.startsWith(`${namespace}/`));
}

/** stdout and stderr of a Job the runner ran (the stand-in for `kubectl logs job/<name>`). */
export function jobLog(namespace: string, name: string): string {
  return readFileSync(join(inject('jobsDir'), namespace, `${name}.log`), 'utf8');
}

/** A kubeconfig file that authenticates only with a ServiceAccount token (no admin certificate). */
export async function serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), 'sa-kubeconfig-')), 'kubeconfig');
  await writeServiceAccountKubeconfig(adminKubeConfig(), namespace, name, path);
  return path;
}
