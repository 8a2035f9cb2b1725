import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { writeAtomicProjection } from './atomic-writer.ts';
import { startWatchLoop } from './watch-loop.ts';

export interface ProjectionTarget {
  /** The replica's volume directory (what the container sees at its mountPath). */
  readonly dir: string;
  /** How long after the API's change this replica's kubelet applies it. @default 0 */
  readonly delayMs?: number;
}

export interface SecretProjector {
  /** Resolves once every target holds the Secret's current revision. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Mirrors one Secret into several replicas' volume directories the way each kubelet would:
 * the atomic-writer layout, applied per replica after its own delay, keys that vanish from
 * the Secret vanish from the directory. A deleted Secret leaves the last projection, as a
 * running pod keeps its volume.
 */
export async function projectSecret(
  kc: KubeConfig,
  namespace: string,
  name: string,
  targets: readonly ProjectionTarget[],
): Promise<SecretProjector> {
  const core = kc.makeApiClient(CoreV1Api);
  // Each replica applies revisions in order; a chain per target keeps them sequential.
  const chains = targets.map(() => Promise.resolve());
  let lastVersion: string | undefined;

  const apply = (secret: V1Secret): void => {
    const version = secret.metadata?.resourceVersion;
    if (version === lastVersion) return;
    lastVersion = version;
    const data = Object.fromEntries(
      Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
    );
    targets.forEach((target, i) => {
      chains[i] = (chains[i] ?? Promise.resolve()).then(async () => {
        if (target.delayMs !== undefined && target.delayMs > 0) {
          await new Promise((resolve) => setTimeout(resolve, target.delayMs));
        }
        await writeAtomicProjection(target.dir, data);
      });
    });
  };

  apply(await core.readNamespacedSecret({ name, namespace }));
  const watch = startWatchLoop<V1Secret>(kc, {
    path: `/api/v1/namespaces/${namespace}/secrets`,
    query: { fieldSelector: `metadata.name=${name}` },
    relist: async () => {
      const secret = await core.readNamespacedSecret({ name, namespace });
      apply(secret);
      return secret.metadata?.resourceVersion;
    },
    onEvent: (phase, secret) => {
      if (phase === 'ADDED' || phase === 'MODIFIED') apply(secret);
    },
  });

  return {
    async settled() {
      await Promise.all(chains);
    },
    async stop() {
      await watch.stop();
      await Promise.all(chains);
    },
  };
}
