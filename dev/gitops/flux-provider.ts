/**
 * The Flux provider: the guide's OCIRepository and HelmRelease (RetryOnFailure, the release
 * values), the chart from the suite's registry (plain HTTP, so `insecure: true`), read back
 * through their status; a repeat sync is `reconcile.fluxcd.io/requestedAt` on both, as
 * `flux reconcile source oci` and `flux reconcile helmrelease` request it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterCli } from './cluster-cli.ts';
import { fluxNamespace, startFluxControllers } from './flux-controllers.ts';
import type { GitOpsProvider } from './gitops-provider.ts';
import { releaseName, releaseNamespace } from './stable-secrets.ts';
import type { ReleaseVersion } from './synthetic-releases.ts';

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}
interface FluxObject {
  readonly metadata: { readonly generation?: number };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly lastHandledReconcileAt?: string;
    readonly lastAttemptedRevision?: string;
    readonly conditions?: readonly Condition[];
    readonly artifact?: { readonly revision?: string };
    readonly history?: readonly { chartVersion?: string; status?: string }[];
  };
}

const requestedAt = 'reconcile.fluxcd.io/requestedAt';

export function ociRepository(version: string, chartUrl: string): Record<string, unknown> {
  return {
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'OCIRepository',
    metadata: { name: releaseName, namespace: fluxNamespace },
    spec: {
      interval: '10m',
      url: chartUrl,
      // The suite's registry speaks plain HTTP on the node's link.
      insecure: true,
      ref: { tag: version },
      layerSelector: {
        mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip',
        operation: 'copy',
      },
    },
  };
}

export function helmRelease(values: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'helm.toolkit.fluxcd.io/v2',
    kind: 'HelmRelease',
    metadata: { name: releaseName, namespace: fluxNamespace },
    spec: {
      interval: '10m',
      timeout: '15m',
      releaseName,
      targetNamespace: releaseNamespace,
      chartRef: { kind: 'OCIRepository', name: releaseName },
      install: { strategy: { name: 'RetryOnFailure', retryInterval: '5m' } },
      upgrade: { strategy: { name: 'RetryOnFailure', retryInterval: '5m' } },
      values,
    },
  };
}

const condition = (object: FluxObject, type: string): Condition | undefined =>
  object.status?.conditions?.find((c) => c.type === type);

/**
 * A chart version without SemVer build metadata: helm-controller appends the OCI digest
 * (`0.0.0-gitops.1+e1ce2bcc39e5`) to the version of a chart from an OCIRepository.
 */
const withoutBuild = (version: string | undefined): string | undefined => version?.split('+')[0];

/**
 * Helm's install or upgrade of `version` failed: the Released condition says so for that
 * chart (`… with chart haptic@<version>[+digest]: …`; until the next attempt ends, the condition
 * still describes the previous one).
 */
const failedAt = (release: FluxObject, version: string): boolean => {
  const released = condition(release, 'Released');
  const aboutVersion = new RegExp(`@${version.replaceAll('.', '\\.')}(?![0-9])`);
  return (
    released?.status === 'False' &&
    (released.reason === 'InstallFailed' || released.reason === 'UpgradeFailed') &&
    aboutVersion.test(released.message ?? '')
  );
};

/** `Ready=True (Succeeded) …; Released=…; history[0] <version> <status>` for messages. */
function describe(release: FluxObject): string {
  const conditions = (release.status?.conditions ?? [])
    .map((c) => `${c.type}=${c.status} (${c.reason ?? ''}: ${(c.message ?? '').slice(0, 300)})`)
    .join('; ');
  const [last] = release.status?.history ?? [];
  return `${conditions}; history[0] ${last?.chartVersion ?? 'none'} ${last?.status ?? ''}`;
}

export async function startFluxProvider(
  cli: ClusterCli,
  dir: string,
  chartUrl: string,
): Promise<GitOpsProvider> {
  const controllers = await startFluxControllers(cli, dir);
  const read = (kind: string): Promise<FluxObject> =>
    cli.kubectlJson<FluxObject>(['get', kind, releaseName, '-n', fluxNamespace]);
  const until = async (
    what: string,
    ms: number,
    ok: (release: FluxObject, source: FluxObject) => boolean,
    failed: (release: FluxObject) => boolean = () => false,
  ): Promise<string> => {
    const deadline = Date.now() + ms;
    let last = 'not read yet';
    while (Date.now() < deadline) {
      const release = await read('helmrelease').catch(() => undefined);
      const source = await read('ocirepository').catch(() => undefined);
      if (release !== undefined && source !== undefined) {
        last = describe(release);
        if (ok(release, source)) return last;
        if (failed(release)) throw new Error(`${what}: it failed; HelmRelease: ${last}`);
      }
      await sleep(1_000);
    }
    throw new Error(`${what} within ${String(ms / 1000)} s; HelmRelease: ${last}`);
  };
  const sourceAt = (source: FluxObject, version: string): boolean =>
    source.status?.artifact?.revision?.startsWith(`${version}@`) === true;
  return {
    name: 'flux',
    versions: controllers.versions,
    resyncRunsHooks: false,
    async select(version, values) {
      const list = {
        apiVersion: 'v1',
        kind: 'List',
        items: [ociRepository(version, chartUrl), helmRelease(values)],
      };
      await cli.kubectl(['apply', '-f', '-'], JSON.stringify(list));
    },
    async resync() {
      const token = new Date().toISOString();
      for (const kind of ['ocirepository', 'helmrelease']) {
        await cli.kubectl([
          ...['annotate', '--overwrite', kind, releaseName, '-n', fluxNamespace],
          `${requestedAt}=${token}`,
        ]);
      }
      await until('Flux did not handle the reconcile request', 180_000, (release, source) =>
        [release, source].every((o) => o.status?.lastHandledReconcileAt === token),
      );
    },
    waitReleased(version: ReleaseVersion, ms: number) {
      return until(
        `HelmRelease did not become Ready at ${version}`,
        ms,
        (release, source) => {
          const [last] = release.status?.history ?? [];
          return (
            sourceAt(source, version) &&
            condition(release, 'Ready')?.status === 'True' &&
            release.status?.observedGeneration === release.metadata.generation &&
            withoutBuild(release.status?.lastAttemptedRevision) === version &&
            withoutBuild(last?.chartVersion) === version &&
            last?.status === 'deployed'
          );
        },
        (release) => failedAt(release, version),
      );
    },
    waitRefused(version: ReleaseVersion, ms: number) {
      return until(
        `HelmRelease did not report ${version} as UpgradeFailed`,
        ms,
        (release, source) =>
          sourceAt(source, version) &&
          failedAt(release, version) &&
          condition(release, 'Released')?.reason === 'UpgradeFailed',
      );
    },
    async stop() {
      await controllers.stop();
    },
  };
}

const fluxKinds = [
  'helmreleases.helm.toolkit.fluxcd.io',
  'ocirepositories.source.toolkit.fluxcd.io',
];

/**
 * Deleting the HelmRelease lets helm-controller uninstall the release while it still runs;
 * when it does not (the controllers are gone: a killed run), the Flux objects lose their
 * finalizers and the release's objects go with their namespace and instance label.
 */
export async function removeFluxObjects(cli: ClusterCli): Promise<void> {
  const scope = ['-n', fluxNamespace, '--ignore-not-found'];
  await cli.kubectlTry(['delete', fluxKinds[0] ?? '', releaseName, ...scope, '--timeout=2m']);
  for (const kind of fluxKinds) {
    const found = await cli.kubectlTry([
      'get',
      kind,
      releaseName,
      '-n',
      fluxNamespace,
      '-o',
      'name',
    ]);
    if (found.code !== 0 || found.stdout.trim() === '') continue;
    await cli.kubectl([
      ...['patch', kind, releaseName, '-n', fluxNamespace, '--type=merge'],
      ...['-p', '{"metadata":{"finalizers":null}}'],
    ]);
    await cli.kubectl(['delete', kind, releaseName, ...scope]);
  }
}
