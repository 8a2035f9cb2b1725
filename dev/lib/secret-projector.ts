import { CoreV1Api, KubeConfig, Watch, type V1Secret } from '@kubernetes/client-node';
import { writeAtomicProjection } from './atomic-writer.ts';

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

  const initial = await core.readNamespacedSecret({ name, namespace });
  apply(initial);
  let stopped = false;
  let abort: AbortController | undefined;
  const watchOnce = (resourceVersion: string | undefined): Promise<void> =>
    new Promise((resolve) => {
      new Watch(kc)
        .watch(
          `/api/v1/namespaces/${namespace}/secrets`,
          { fieldSelector: `metadata.name=${name}`, resourceVersion },
          (phase: string, secret: V1Secret) => {
            if (phase === 'ADDED' || phase === 'MODIFIED') apply(secret);
          },
          () => {
            resolve();
          },
        )
        .then(
          (controller) => {
            abort = controller;
          },
          () => {
            resolve();
          },
        );
    });
  const loop = (async () => {
    let version = initial.metadata?.resourceVersion;
    while (!stopped) {
      await watchOnce(version);
      version = undefined;
      if (!stopped) {
        apply(await core.readNamespacedSecret({ name, namespace }).catch(() => initial));
      }
    }
  })();

  return {
    async settled() {
      await Promise.all(chains);
    },
    async stop() {
      stopped = true;
      abort?.abort();
      await loop;
      await Promise.all(chains);
    },
  };
}
