/**
 * Reads what the current replicas report having loaded for the mTLS link: every Deployment in
 * the namespace whose `agent-tls` volume mounts one of the identity Secrets (the server Secret:
 * agents; the client Secret: controllers), their Pods not being deleted, and the entries the
 * controllers recorded in the HAProxyTemplateConfig named by the controller's
 * `--template-config` argument (`status.tls.<pod>`, see docs/certificate-convergence.md).
 *
 * Needs `list` on Deployments and Pods and `get` on that HAProxyTemplateConfig in the namespace.
 * The Deployments are found by what they mount, so the renewal Job needs no release name.
 */
import type { AppsV1Api, CoreV1Api, CustomObjectsApi, V1Deployment } from '@kubernetes/client-node';
import {
  type TlsPeerRole,
  type TlsStateEntryParse,
  parseTlsStateEntry,
  tlsStatusField,
} from '../api/tls-state-entry.ts';
import {
  templateConfigGroup,
  templateConfigPlural,
  templateConfigVersion,
} from '../api/template-config.ts';
import { agentTlsVolume } from '../secrets/layout.ts';
import { apiStatus } from '../kube/api-errors.ts';

/** The recorded reports of the current replicas, as read from the cluster. */
export interface ReplicaReports {
  /** Pods of the Deployments mounting the identity Secrets, except those being deleted. */
  readonly pods: readonly { readonly name: string; readonly role: TlsPeerRole }[];
  /** Recorded entries by Pod name, as parsed. */
  readonly entries: ReadonlyMap<string, TlsStateEntryParse>;
  /** Why some reports cannot be known (a controller without --template-config, no HAProxyTemplateConfig); sentences. */
  readonly problems: readonly string[];
}

/** Where the replicas' reports come from. */
export interface ReplicaReportSource {
  /** The reports of the replicas mounting each role's identity Secret. */
  read(secrets: Readonly<Record<TlsPeerRole, string>>): Promise<ReplicaReports>;
}

/** The controller argument naming the HAProxyTemplateConfig where the controllers record the reports. */
export const templateConfigFlag = '--template-config';

/** The Secret a Deployment's `agent-tls` volume mounts, if any. */
export function mountedIdentitySecret(deployment: V1Deployment): string | undefined {
  const secret = deployment.spec?.template.spec?.volumes?.find((v) => v.name === agentTlsVolume)
    ?.secret?.secretName;
  return secret === '' ? undefined : secret;
}

/** A Deployment's Pod selector as a label selector string (matchLabels). */
export function podSelector(deployment: V1Deployment): string {
  return Object.entries(deployment.spec?.selector.matchLabels ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/**
 * The value of `<flag>=value` among a controller Deployment's container arguments (such as
 * `--template-config`, the HAProxyTemplateConfig where the controllers record the reports).
 */
export function controllerArgument(controller: V1Deployment, flag: string): string | undefined {
  const prefix = `${flag}=`;
  const args = controller.spec?.template.spec?.containers.flatMap((c) => c.args ?? []) ?? [];
  return args.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}

/** The parsed `status.tls` entries of a HAProxyTemplateConfig as the API returned it. */
export function recordedTlsEntries(config: unknown): Map<string, TlsStateEntryParse> {
  const entries = new Map<string, TlsStateEntryParse>();
  const status =
    typeof config === 'object' && config !== null
      ? (config as { status?: Record<string, unknown> }).status
      : undefined;
  const recorded = status?.[tlsStatusField];
  if (typeof recorded === 'object' && recorded !== null && !Array.isArray(recorded)) {
    for (const [pod, value] of Object.entries(recorded))
      entries.set(pod, parseTlsStateEntry(value, `status.${tlsStatusField}.${pod}`));
  }
  return entries;
}

export class ClusterReplicaReports implements ReplicaReportSource {
  readonly #apps: AppsV1Api;
  readonly #core: CoreV1Api;
  readonly #custom: CustomObjectsApi;
  readonly #namespace: string;

  constructor(apps: AppsV1Api, core: CoreV1Api, custom: CustomObjectsApi, namespace: string) {
    this.#apps = apps;
    this.#core = core;
    this.#custom = custom;
    this.#namespace = namespace;
  }

  async read(secrets: Readonly<Record<TlsPeerRole, string>>): Promise<ReplicaReports> {
    const namespace = this.#namespace;
    const deployments = (await this.#apps.listNamespacedDeployment({ namespace })).items;
    const pods = new Map<string, TlsPeerRole>();
    const configs = new Set<string>();
    const problems: string[] = [];
    for (const deployment of deployments) {
      const mounted = mountedIdentitySecret(deployment);
      const role: TlsPeerRole | undefined =
        mounted === secrets.agent
          ? 'agent'
          : mounted === secrets.controller
            ? 'controller'
            : undefined;
      if (role === undefined) continue;
      const name = deployment.metadata?.name ?? '';
      if (role === 'controller') {
        const config = controllerArgument(deployment, templateConfigFlag);
        if (config === undefined)
          problems.push(
            `Deployment ${namespace}/${name} has no ${templateConfigFlag}=<name> argument, so its replicas' reports cannot be found.`,
          );
        else configs.add(config);
      }
      const selector = podSelector(deployment);
      if (selector === '') continue;
      const list = await this.#core.listNamespacedPod({ namespace, labelSelector: selector });
      for (const pod of list.items) {
        const podName = pod.metadata?.name;
        if (podName !== undefined && pod.metadata?.deletionTimestamp === undefined)
          pods.set(podName, role);
      }
    }
    const entries = new Map<string, TlsStateEntryParse>();
    for (const name of configs) {
      try {
        const config: unknown = await this.#custom.getNamespacedCustomObject({
          group: templateConfigGroup,
          version: templateConfigVersion,
          namespace,
          plural: templateConfigPlural,
          name,
        });
        for (const [pod, entry] of recordedTlsEntries(config)) entries.set(pod, entry);
      } catch (error) {
        if (apiStatus(error) !== 404) throw error;
        problems.push(
          `HAProxyTemplateConfig ${namespace}/${name}, where the controllers record what each replica loaded, does not exist.`,
        );
      }
    }
    return {
      pods: [...pods].map(([name, role]) => ({ name, role })),
      entries,
      problems,
    };
  }
}
