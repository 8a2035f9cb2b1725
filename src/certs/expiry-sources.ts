/**
 * `haptic certificates check`, the reading half: which identity Secrets the workloads mount
 * (the `agent-tls` volume of each Deployment), and their public keys only — tls.crt and
 * ca.crt are passed on, everything else of a Secret is dropped as soon as it is read.
 */
import { describeError } from '../errors.ts';
import type { DeploymentClient } from '../kube/deployments.ts';
import type { SecretClient } from '../kube/secrets.ts';
import {
  type ExpiryEntry,
  type ExpiryWindow,
  checkedKeys,
  secretExpiry,
  unreadable,
} from './expiry-report.ts';
import { agentTlsVolume } from '../secrets/layout.ts';

/** The Deployments of release `haptic` that mount an identity. */
export const defaultDeployments = ['haptic-controller', 'haptic-haproxy'] as const;

export interface SecretSources {
  /** Secret names found, without duplicates, in the Deployments' order. */
  readonly secrets: readonly string[];
  /** One unreadable entry per Deployment whose Secret could not be found. */
  readonly problems: readonly ExpiryEntry[];
}

/** The Secret each Deployment's `agent-tls` volume names. */
export async function secretsFromDeployments(
  deployments: DeploymentClient,
  names: readonly string[],
): Promise<SecretSources> {
  const secrets: string[] = [];
  const problems: ExpiryEntry[] = [];
  for (const name of names) {
    const source = `deployment/${name}`;
    try {
      const deployment = await deployments.read(name);
      if (deployment === undefined) {
        problems.push(
          unreadable(
            source,
            agentTlsVolume,
            `Deployment ${deployments.namespace}/${name} does not exist`,
          ),
        );
        continue;
      }
      const volume = deployment.spec?.template.spec?.volumes?.find(
        (v) => v.name === agentTlsVolume,
      );
      const secret = volume?.secret?.secretName;
      if (secret === undefined || secret === '') {
        problems.push(
          unreadable(
            source,
            agentTlsVolume,
            `Deployment ${deployments.namespace}/${name} has no ${agentTlsVolume} Secret volume`,
          ),
        );
      } else if (!secrets.includes(secret)) {
        secrets.push(secret);
      }
    } catch (error) {
      problems.push(unreadable(source, agentTlsVolume, describeError(error)));
    }
  }
  return { secrets, problems };
}

/** The expiry entries of each Secret, reading only tls.crt and ca.crt. */
export async function readSecretExpiry(
  client: SecretClient,
  secrets: readonly string[],
  window: ExpiryWindow,
): Promise<ExpiryEntry[]> {
  const entries: ExpiryEntry[] = [];
  for (const name of secrets) {
    try {
      const secret = await client.read(name);
      const data =
        secret === undefined
          ? undefined
          : Object.fromEntries(checkedKeys.map((key) => [key, secret.data?.[key]]));
      entries.push(...secretExpiry(name, data, window));
    } catch (error) {
      entries.push(...checkedKeys.map((key) => unreadable(name, key, describeError(error))));
    }
  }
  return entries;
}
