/**
 * The Argo CD provider: the guide's Application (automated sync with prune and self-heal,
 * `retry.limit: 1`, server-side apply), the chart from the suite's registry in Argo CD's Helm
 * source format, read back through its status. A repeat sync is what `argocd app sync haptic`
 * asks the API server for: an `operation` written on the Application (a full sync, so the
 * chart's hooks run again as PreSync).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { argoNamespace, startArgoControllers } from './argo-controllers.ts';
import type { ClusterCli } from './cluster-cli.ts';
import type { GitOpsProvider } from './gitops-provider.ts';
import { releaseName, releaseNamespace } from './stable-secrets.ts';
import type { ReleaseVersion } from './synthetic-releases.ts';

interface Operation {
  readonly sync?: { readonly revision?: string };
  readonly info?: readonly { readonly name: string; readonly value: string }[];
}
interface Application {
  readonly status?: {
    readonly sync?: { readonly status?: string; readonly revision?: string };
    readonly health?: { readonly status?: string };
    readonly conditions?: readonly { readonly type: string; readonly message?: string }[];
    readonly operationState?: {
      readonly operation?: Operation;
      readonly phase?: string;
      readonly message?: string;
      readonly retryCount?: number;
      readonly syncResult?: { readonly revision?: string };
    };
  };
}

/** The guide's Application ("Generate the Application"), with this suite's repository. */
export function application(
  version: string,
  values: Record<string, unknown>,
  chartRepository: string,
): Record<string, unknown> {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: releaseName, namespace: argoNamespace },
    spec: {
      project: 'default',
      destination: { server: 'https://kubernetes.default.svc', namespace: releaseNamespace },
      source: {
        repoURL: chartRepository,
        chart: 'haptic',
        targetRevision: version,
        helm: { releaseName, valuesObject: values },
      },
      syncPolicy: {
        automated: { enabled: true, prune: true, selfHeal: true },
        retry: { limit: 1 },
        syncOptions: ['ServerSideApply=true', 'DisableClientSideApplyMigration=true'],
      },
    },
  };
}

/** The revision the last operation synced (or tried to). */
const operationRevision = (app: Application): string | undefined =>
  app.status?.operationState?.syncResult?.revision ??
  app.status?.operationState?.operation?.sync?.revision;

const finishedUnsuccessfully = (app: Application): boolean =>
  ['Failed', 'Error'].includes(app.status?.operationState?.phase ?? '');

/** `sync=Synced@<rev> health=Healthy operation=Succeeded@<rev> retries=0 (<message>)`. */
function describe(app: Application): string {
  const status = app.status;
  const operation = status?.operationState;
  const conditions = (status?.conditions ?? [])
    .map((c) => `${c.type}: ${(c.message ?? '').slice(0, 300)}`)
    .join('; ');
  return [
    `sync=${status?.sync?.status ?? 'none'}@${status?.sync?.revision ?? ''}`,
    `health=${status?.health?.status ?? 'none'}`,
    `operation=${operation?.phase ?? 'none'}@${operationRevision(app) ?? ''}`,
    `retries=${String(operation?.retryCount ?? 0)}`,
    `(${(operation?.message ?? '').slice(0, 500)})`,
    conditions === '' ? '' : `conditions: ${conditions}`,
  ]
    .filter((part) => part !== '')
    .join(' ');
}

export async function startArgoProvider(
  cli: ClusterCli,
  dir: string,
  chartRepository: string,
): Promise<GitOpsProvider> {
  const controllers = await startArgoControllers(cli, dir, chartRepository);
  let selected: ReleaseVersion | undefined;
  const until = async (
    what: string,
    ms: number,
    ok: (app: Application) => boolean,
    failed: (app: Application) => boolean = () => false,
  ): Promise<string> => {
    const deadline = Date.now() + ms;
    let last = 'not read yet';
    while (Date.now() < deadline) {
      const app = await cli
        .kubectlJson<Application>(['get', 'application', releaseName, '-n', argoNamespace])
        .catch(() => undefined);
      if (app !== undefined) {
        last = describe(app);
        if (ok(app)) return last;
        if (failed(app)) throw new Error(`${what}: it failed; Application: ${last}`);
      }
      await sleep(1_000);
    }
    throw new Error(`${what} within ${String(ms / 1000)} s; Application: ${last}`);
  };
  return {
    name: 'argo',
    versions: controllers.versions,
    resyncRunsHooks: true,
    async select(version, values) {
      selected = version;
      await cli.kubectl(
        ['apply', '-f', '-'],
        JSON.stringify(application(version, values, chartRepository)),
      );
    },
    async resync() {
      if (selected === undefined) throw new Error('resync before any version was selected');
      const token = new Date().toISOString();
      // As the API server builds it for `argocd app sync haptic`: the Application's source,
      // sync options and retry strategy, the selected revision, no prune.
      const { spec } = await cli.kubectlJson<{
        spec: { source: unknown; syncPolicy?: { syncOptions?: string[]; retry?: unknown } };
      }>(['get', 'application', releaseName, '-n', argoNamespace]);
      const operation = {
        initiatedBy: { username: 'lifecycle-suite' },
        info: [{ name: 'requestedAt', value: token }],
        sync: {
          source: spec.source,
          revision: selected,
          syncOptions: spec.syncPolicy?.syncOptions ?? [],
        },
        ...(spec.syncPolicy?.retry === undefined ? {} : { retry: spec.syncPolicy.retry }),
      };
      await cli.kubectl([
        ...['patch', 'application', releaseName, '-n', argoNamespace, '--type=merge'],
        ...['-p', JSON.stringify({ operation })],
      ]);
      const ours = (app: Application): boolean =>
        app.status?.operationState?.operation?.info?.some((i) => i.value === token) === true;
      await until(
        'Argo CD did not finish the requested sync',
        300_000,
        (app) => ours(app) && app.status?.operationState?.phase === 'Succeeded',
        (app) => ours(app) && finishedUnsuccessfully(app),
      );
    },
    waitReleased(version: ReleaseVersion, ms: number) {
      return until(
        `Application did not become Synced and Healthy at ${version}`,
        ms,
        (app) =>
          app.status?.sync?.status === 'Synced' &&
          app.status.sync.revision === version &&
          app.status.health?.status === 'Healthy' &&
          app.status.operationState?.phase === 'Succeeded' &&
          operationRevision(app) === version,
        (app) => finishedUnsuccessfully(app) && operationRevision(app) === version,
      );
    },
    waitRefused(version: ReleaseVersion, ms: number) {
      // retry.limit 1: refused once the retry failed too.
      return until(
        `Application did not report the sync of ${version} as failed after its retry`,
        ms,
        (app) =>
          finishedUnsuccessfully(app) &&
          operationRevision(app) === version &&
          (app.status?.operationState?.retryCount ?? 0) >= 1,
      );
    },
    async stop() {
      await controllers.stop();
    },
  };
}

/**
 * Removes the Application without cascading (it has no resources finalizer): the release's
 * objects go with their namespace and the cluster-scoped ones by their instance label.
 */
export async function removeArgoObjects(cli: ClusterCli): Promise<void> {
  await cli.kubectlTry([
    ...['delete', 'applications.argoproj.io', releaseName, '-n', argoNamespace],
    '--ignore-not-found',
  ]);
}
