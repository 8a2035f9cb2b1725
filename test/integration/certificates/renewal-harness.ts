/**
 * Runs `haptic certificates renew` / `check` as real processes against the shared control
 * plane, and reads back what they wrote. Times are given with `--now`, never waited for.
 */
import { fileURLToPath } from 'node:url';
import { CoreV1Api, type V1Secret } from '@kubernetes/client-node';
import { execa } from 'execa';
import { inject } from 'vitest';
import {
  type Certificate,
  certificateFingerprint,
  decodeCertificateChain,
} from '../../../src/pki/index.ts';
import { adminKubeConfig } from '../../support/cluster.ts';

const cli = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));
const dayMs = 86_400_000;

/** Secret names used by every test, as the chart names them for release `haptic`. */
export const names = {
  issuer: 'haptic-agent-ca',
  server: 'haptic-agent-server-tls',
  client: 'haptic-agent-client-tls',
} as const;

export type Target = keyof typeof names;

/** A fixed start of time for tests that drive the clock with `--now`. */
export const t0 = new Date('2030-01-01T00:00:00Z');

/** `t0` (or `from`) plus whole days and optional seconds. */
export function after(days: number, seconds = 0, from: Date = t0): Date {
  return new Date(from.getTime() + days * dayMs + seconds * 1000);
}

/** RFC 3339 UTC, as `--now` takes it. */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

export interface LogLine {
  readonly level: string;
  readonly event?: string;
  readonly action?: string;
  readonly reason?: string;
  readonly secret?: string;
  readonly operation?: string;
  readonly generation?: number;
  readonly writes?: number;
  readonly requests?: Record<string, number>;
  readonly msg: string;
}

export interface CommandRun {
  readonly exitCode: number | undefined;
  /** Set when the process was killed (the fault injection kills with SIGKILL). */
  readonly signal: string | undefined;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as JSON lines (renew only). */
  readonly logs: readonly LogLine[];
}

export interface RenewArgs {
  readonly now?: Date;
  readonly validityDays?: number;
  readonly exitAfterWrites?: number;
  /** A kubeconfig other than the admin one (e.g. the renewal ServiceAccount's). */
  readonly kubeconfig?: string;
  readonly extra?: readonly string[];
}

function parseLogs(stdout: string): LogLine[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

async function runCli(
  args: readonly string[],
  kubeconfig?: string,
  jsonLogs = true,
): Promise<CommandRun> {
  const result = await execa(process.execPath, [cli, ...args], {
    env: { KUBECONFIG: kubeconfig ?? inject('kubeconfig') },
    extendEnv: false,
    reject: false,
  });
  return {
    exitCode: result.exitCode,
    signal: result.signal,
    stdout: result.stdout,
    stderr: result.stderr,
    logs: jsonLogs ? parseLogs(result.stdout) : [],
  };
}

/** `haptic certificates renew` with the chart's flags for release `haptic` in `namespace`. */
export function renew(namespace: string, args: RenewArgs = {}): Promise<CommandRun> {
  return runCli(
    [
      'certificates',
      'renew',
      `--namespace=${namespace}`,
      `--issuer-secret=${names.issuer}`,
      `--server-secret=${names.server}`,
      `--client-secret=${names.client}`,
      '--server-name=haptic-agent',
      '--client-name=haptic-controller',
      `--validity-days=${args.validityDays ?? 365}`,
      ...(args.now === undefined ? [] : [`--now=${rfc3339(args.now)}`]),
      ...(args.exitAfterWrites === undefined
        ? []
        : [`--exit-after-writes=${args.exitAfterWrites}`]),
      ...(args.extra ?? []),
    ],
    args.kubeconfig,
  );
}

/** `haptic certificates check` with the given arguments. */
export function check(args: readonly string[]): Promise<CommandRun> {
  return runCli(['certificates', 'check', ...args], undefined, false);
}

/** The run's final log line (`finished` or `failed`). */
export function summary(run: CommandRun): LogLine | undefined {
  return run.logs.findLast((line) => line.event === 'finished' || line.event === 'failed');
}

/** Actions the run decided, in order. */
export function actions(run: CommandRun): string[] {
  return run.logs.filter((line) => line.event === 'decision').map((line) => line.action ?? '');
}

/** Secrets the run wrote, in order. */
export function written(run: CommandRun): string[] {
  return run.logs.filter((line) => line.event === 'write').map((line) => line.secret ?? '');
}

export type Snapshot = Readonly<Record<Target, V1Secret | undefined>>;

/** The three Secrets as they are now (admin read; undefined when absent). */
export async function readSecrets(namespace: string): Promise<Snapshot> {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const read = async (name: string): Promise<V1Secret | undefined> => {
    try {
      return await core.readNamespacedSecret({ name, namespace });
    } catch {
      return undefined;
    }
  };
  return {
    issuer: await read(names.issuer),
    server: await read(names.server),
    client: await read(names.client),
  };
}

/** resourceVersion of each Secret. */
export function versions(snapshot: Snapshot): Record<Target, string | undefined> {
  return {
    issuer: snapshot.issuer?.metadata?.resourceVersion,
    server: snapshot.server?.metadata?.resourceVersion,
    client: snapshot.client?.metadata?.resourceVersion,
  };
}

/** A key of a Secret as text (undefined when absent). */
export function text(secret: V1Secret | undefined, key: string): string | undefined {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

/** The certificates of a PEM key of a Secret. */
export function certificates(secret: V1Secret | undefined, key: string): readonly Certificate[] {
  const pem = text(secret, key);
  if (pem === undefined)
    throw new Error(`no ${key} in Secret ${secret?.metadata?.name ?? '(absent)'}`);
  return decodeCertificateChain(pem);
}

/** SHA-256 fingerprint of the first certificate of a PEM key. */
export function fingerprint(secret: V1Secret | undefined, key: string): string {
  const [first] = certificates(secret, key);
  if (first === undefined) throw new Error(`empty ${key}`);
  return certificateFingerprint(first);
}

/** The issuer's generation. */
export function generation(snapshot: Snapshot): number {
  return Number(text(snapshot.issuer, 'generation'));
}
