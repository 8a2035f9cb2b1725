/**
 * The live reader of `haptic preflight` and `haptic webhook`: the configuration
 * `loadKubeConfig` would choose (`--kubeconfig`, KUBECONFIG, ~/.kube/config, the Pod's
 * ServiceAccount), read without @kubernetes/client-node when it is a common one
 * (`loadKubeAccess`), through the full client otherwise. Either way the same reader sends the
 * same requests; only the start-up cost differs.
 */
import type { AccessLiveReaderOptions } from '../webhook/kube-live-reader.ts';
import type { LiveReader } from '../webhook/release-io.ts';

/** Throws `KUBE_CONFIG_MISSING` as `loadKubeConfig` does when there is no configuration. */
export async function openLiveReader(
  kubeconfig: string | undefined,
  options: AccessLiveReaderOptions,
): Promise<LiveReader> {
  const [{ loadKubeAccess }, { createAccessLiveReader, createKubeLiveReader }] = await Promise.all([
    import('../kube/kube-access.ts'),
    import('../webhook/kube-live-reader.ts'),
  ]);
  const light = loadKubeAccess(kubeconfig);
  if (light !== undefined) return createAccessLiveReader(light, options);
  const { loadKubeConfig } = await import('../kube/kube-config.ts');
  return createKubeLiveReader({
    kubeConfig: loadKubeConfig(kubeconfig),
    userAgent: options.userAgent,
  });
}
