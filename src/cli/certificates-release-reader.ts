/**
 * What `haptic certificates status` and `haptic certificates rotate-ca` read of a release: its
 * two Deployments, the identity Secrets their `agent-tls` volumes mount, their Pods, the
 * issuer Secret (the controller's `--issuer-secret`, when the release has one) and the Pods' TLS state entries in the
 * HAProxyTemplateConfig status. I/O only.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type V1Deployment,
  type V1Secret,
} from '@kubernetes/client-node';
import { agentTlsVolume } from '../secrets/layout.ts';
import type { TlsPeerRole, TlsStateEntryParse } from '../api/tls-state-entry.ts';
import {
  templateConfigGroup,
  templateConfigPlural,
  templateConfigVersion,
} from '../api/template-config.ts';
import { makeApiClient } from '../kube/api-client.ts';
import { apiStatus } from '../kube/api-errors.ts';
import { loadKubeConfig } from '../kube/kube-config.ts';
import {
  controllerArgument,
  mountedIdentitySecret,
  podSelector,
  recordedTlsEntries,
  templateConfigFlag,
} from '../certs/replica-reports.ts';
import { RequestCounter } from '../kube/request-counter.ts';
import { componentName, releaseFullname } from '../validation/chart-names.ts';
import { readPackageVersion } from '../version.ts';

/** A release that cannot be read as the command needs it (missing Deployment or Secret). */
export class ReleaseReadError extends Error {}

export interface ReleaseClients {
  readonly apps: AppsV1Api;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
}

/** API clients for `command` (it names the command in the User-Agent). */
export function connectRelease(kubeconfig: string | undefined, command: string): ReleaseClients {
  const kc = loadKubeConfig(kubeconfig);
  const client = {
    counter: new RequestCounter(),
    userAgent: `haptic/${readPackageVersion()} (certificates ${command})`,
  };
  return {
    apps: makeApiClient(kc, AppsV1Api, client),
    core: makeApiClient(kc, CoreV1Api, client),
    custom: makeApiClient(kc, CustomObjectsApi, client),
  };
}

export interface ReleaseRef {
  readonly namespace: string;
  readonly release: string;
}

/** One of the two Deployments and the identity Secret it mounts. */
export interface ReleaseWorkload {
  readonly role: TlsPeerRole;
  readonly deployment: V1Deployment;
  /** The Secret of the `agent-tls` volume. */
  readonly secretName: string;
  readonly secret: V1Secret;
  /** The Deployment's Pod selector, as a label selector string. */
  readonly selector: string;
}

export interface ReleaseTls {
  readonly workloads: Readonly<Record<TlsPeerRole, ReleaseWorkload>>;
  /** Pods of both Deployments that are not being deleted. */
  readonly pods: readonly { readonly name: string; readonly role: TlsPeerRole }[];
  /** The issuer Secret of the default provider, when it exists. */
  readonly issuer: V1Secret | undefined;
  /** status.tls entries by Pod name, as parsed. */
  readonly entries: ReadonlyMap<string, TlsStateEntryParse>;
}

const noOverrides = { nameOverride: '', fullnameOverride: '' };

/** The Deployment names of a release, by role (the chart's names without overrides). */
export function releaseDeploymentNames(release: string): Record<TlsPeerRole, string> {
  const fullname = releaseFullname(release, noOverrides);
  return {
    controller: componentName(fullname, 'controller'),
    agent: componentName(fullname, 'haproxy'),
  };
}

async function orAbsent<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (apiStatus(error) === 404) return undefined;
    throw error;
  }
}

async function readWorkload(
  clients: ReleaseClients,
  role: TlsPeerRole,
  name: string,
  namespace: string,
): Promise<ReleaseWorkload> {
  const deployment = await orAbsent(() =>
    clients.apps.readNamespacedDeployment({ name, namespace }),
  );
  if (deployment === undefined)
    throw new ReleaseReadError(
      `Deployment ${namespace}/${name} does not exist; check -n and --release.`,
    );
  const secretName = mountedIdentitySecret(deployment);
  if (secretName === undefined)
    throw new ReleaseReadError(
      `Deployment ${namespace}/${name} has no ${agentTlsVolume} Secret volume; the release does not use mTLS.`,
    );
  const secret = await orAbsent(() =>
    clients.core.readNamespacedSecret({ name: secretName, namespace }),
  );
  if (secret === undefined)
    throw new ReleaseReadError(
      `Secret ${namespace}/${secretName} (mounted by the ${role}s) does not exist.`,
    );
  return { role, deployment, secretName, secret, selector: podSelector(deployment) };
}

/** Reads the release's Deployments, identity Secrets, Pods, issuer Secret and TLS entries. */
export async function readReleaseTls(
  clients: ReleaseClients,
  ref: ReleaseRef,
): Promise<ReleaseTls> {
  const { namespace } = ref;
  const names = releaseDeploymentNames(ref.release);
  const controller = await readWorkload(clients, 'controller', names.controller, namespace);
  const agent = await readWorkload(clients, 'agent', names.agent, namespace);
  const pods: { name: string; role: TlsPeerRole }[] = [];
  for (const workload of [controller, agent]) {
    const list = await clients.core.listNamespacedPod({
      namespace,
      labelSelector: workload.selector,
    });
    for (const pod of list.items) {
      if (pod.metadata?.deletionTimestamp !== undefined) continue;
      pods.push({ name: pod.metadata?.name ?? '', role: workload.role });
    }
  }
  const fullname = releaseFullname(ref.release, noOverrides);
  // The issuer Secret the release uses, as the controller is told (absent for external
  // identities, even when an earlier default-provider issuer Secret survived the switch).
  const issuerName = controllerArgument(controller.deployment, '--issuer-secret');
  const issuer =
    issuerName === undefined
      ? undefined
      : await orAbsent(() => clients.core.readNamespacedSecret({ name: issuerName, namespace }));
  const config: unknown = await orAbsent(() =>
    clients.custom.getNamespacedCustomObject({
      group: templateConfigGroup,
      version: templateConfigVersion,
      namespace,
      plural: templateConfigPlural,
      name: controllerArgument(controller.deployment, templateConfigFlag) ?? fullname,
    }),
  );
  const entries = recordedTlsEntries(config);
  return { workloads: { controller, agent }, pods, issuer, entries };
}
