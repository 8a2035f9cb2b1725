/**
 * What the lifecycle phases compare: the release namespace's Secrets (a hash of each one's
 * data), its Pods (UIDs per component), its Deployments (generation and Pod template hash)
 * and the configuration every HAProxy agent runs (`haptic agent state`'s configDigest).
 */
import { createHash } from 'node:crypto';
import { preRolloutNames } from '../../src/validation/chart-names.ts';
import type { ClusterCli } from './cluster-cli.ts';
import { releaseName, releaseNamespace } from './stable-secrets.ts';

interface Metadata {
  readonly name: string;
  readonly uid: string;
  readonly generation?: number;
  readonly deletionTimestamp?: string;
  readonly labels?: Record<string, string>;
}
interface List<T> {
  readonly items: readonly T[];
}
interface SecretObject {
  readonly metadata: Metadata;
  readonly data?: Record<string, string>;
}
interface PodObject {
  readonly metadata: Metadata;
  readonly spec: {
    readonly initContainers?: readonly { name: string; args?: readonly string[] }[];
  };
  readonly status: {
    readonly phase?: string;
    readonly podIP?: string;
    readonly conditions?: readonly { type: string; status: string }[];
  };
}
interface DeploymentObject {
  readonly metadata: Metadata;
  readonly spec: { readonly template: unknown };
}

export interface HAProxyPod {
  readonly name: string;
  readonly uid: string;
  readonly address: string;
  readonly localSocketArg: string;
}

export interface ReleaseSnapshot {
  /** Secret name → sha256 of its data (sorted keys). */
  readonly secrets: Readonly<Record<string, string>>;
  /** Pod name → UID, for the controller and HAProxy Pods. */
  readonly pods: Readonly<Record<string, string>>;
  /** Deployment name → `<generation>/<template hash>`. */
  readonly deployments: Readonly<Record<string, string>>;
  /** HAProxy Pod name → the agent's configDigest. */
  readonly configDigests: Readonly<Record<string, string>>;
  readonly haproxyPods: readonly HAProxyPod[];
}

const sha256 = (value: unknown): string =>
  createHash('sha256').update(JSON.stringify(value)).digest('hex');

function sortedData(data: Record<string, string> = {}): [string, string][] {
  return Object.entries(data).sort(([a], [b]) => a.localeCompare(b));
}

/** Helm's release records and the pre-rollout values Secret: each sync may write them. */
export function isReleaseBookkeeping(name: string): boolean {
  return (
    name.startsWith(`sh.helm.release.v1.${releaseName}.`) ||
    name === preRolloutNames(releaseName).valuesSecret
  );
}

/** Running, Ready, not terminating Pods of a chart component. */
export async function readyPods(cli: ClusterCli, component: string): Promise<PodObject[]> {
  const pods = await cli.kubectlJson<List<PodObject>>([
    ...['get', 'pods', '-n', releaseNamespace],
    `-l=app.kubernetes.io/instance=${releaseName},app.kubernetes.io/component=${component}`,
  ]);
  return pods.items.filter(
    (pod) =>
      pod.metadata.deletionTimestamp === undefined &&
      pod.status.phase === 'Running' &&
      (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  );
}

export async function haproxyPods(cli: ClusterCli): Promise<HAProxyPod[]> {
  return (await readyPods(cli, 'loadbalancer')).map((pod) => {
    const agent = (pod.spec.initContainers ?? []).find((c) => c.name === 'agent');
    const localSocketArg = (agent?.args ?? []).find((a) => a.startsWith('--local-socket=')) ?? '';
    return {
      name: pod.metadata.name,
      uid: pod.metadata.uid,
      address: pod.status.podIP ?? '',
      localSocketArg,
    };
  });
}

/** The configDigest the agent of `pod` reports, or `none` when it runs no configuration. */
export async function agentConfigDigest(cli: ClusterCli, pod: HAProxyPod): Promise<string> {
  const state = JSON.parse(
    await cli.kubectl([
      ...['exec', pod.name, '-n', releaseNamespace, '-c', 'agent', '--'],
      ...['/usr/local/bin/haptic', 'agent', 'state', pod.localSocketArg],
    ]),
  ) as { configDigest: string | null };
  return state.configDigest ?? 'none';
}

export async function takeSnapshot(cli: ClusterCli): Promise<ReleaseSnapshot> {
  const ns = releaseNamespace;
  const secrets = await cli.kubectlJson<List<SecretObject>>(['get', 'secrets', '-n', ns]);
  const deployments = await cli.kubectlJson<List<DeploymentObject>>([
    ...['get', 'deployments', '-n', ns, `-l=app.kubernetes.io/instance=${releaseName}`],
  ]);
  const controllers = await readyPods(cli, 'controller');
  const haproxy = await haproxyPods(cli);
  const configDigests: Record<string, string> = {};
  for (const pod of haproxy) configDigests[pod.name] = await agentConfigDigest(cli, pod);
  return {
    secrets: Object.fromEntries(
      secrets.items.map((s) => [s.metadata.name, sha256(sortedData(s.data))]),
    ),
    pods: Object.fromEntries(
      [...controllers, ...haproxy.map((p) => ({ metadata: { name: p.name, uid: p.uid } }))].map(
        (p) => [p.metadata.name, p.metadata.uid],
      ),
    ),
    deployments: Object.fromEntries(
      deployments.items.map((d) => [
        d.metadata.name,
        `${String(d.metadata.generation ?? 0)}/${sha256(d.spec.template).slice(0, 16)}`,
      ]),
    ),
    configDigests,
    haproxyPods: haproxy,
  };
}

/** `<what> <key>: <before> → <after>` for every key whose value differs or is missing. */
export function differences(
  what: string,
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>,
  keys: readonly string[] = [...new Set([...Object.keys(before), ...Object.keys(after)])],
): string[] {
  return keys
    .filter((key) => before[key] !== after[key])
    .map((key) => `${what} ${key}: ${before[key] ?? 'absent'} → ${after[key] ?? 'absent'}`);
}
