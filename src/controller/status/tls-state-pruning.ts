/**
 * Removes `status.tls` entries of Pods that no longer exist: a controller replica killed
 * before it could remove its own entry, or an agent that went away under a previous leader.
 * The leader runs it from time to time; a Pod is asked for only when it is not one it knows.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { TlsStateSink } from './tls-state-book.ts';
import { tlsStatusField } from '../../api/tls-state-entry.ts';

export interface TlsStatePruning {
  /** The HAProxyTemplateConfig as watched (with its status). */
  readonly config: KubernetesObject | undefined;
  /** Pods known to exist: the agents now, this replica. */
  readonly known: ReadonlySet<string>;
  /** Whether a Pod of the namespace exists; throws when that cannot be told. */
  readonly podExists: (pod: string) => Promise<boolean>;
  readonly sink: TlsStateSink;
}

/** The Pods of the recorded entries. */
export function recordedPods(config: KubernetesObject | undefined): string[] {
  const status = (config as { status?: Record<string, unknown> } | undefined)?.status;
  const entries = status?.[tlsStatusField];
  return typeof entries === 'object' && entries !== null && !Array.isArray(entries)
    ? Object.keys(entries)
    : [];
}

export async function pruneTlsState(pruning: TlsStatePruning): Promise<void> {
  for (const pod of recordedPods(pruning.config)) {
    if (pruning.known.has(pod)) continue;
    if (!(await pruning.podExists(pod))) pruning.sink.put(pod, null);
  }
}
