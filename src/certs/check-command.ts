/**
 * `haptic certificates check` as a process: the expiry of tls.crt and ca.crt of each identity
 * Secret — named, or found through the `agent-tls` volumes of the Deployments — printed one
 * line each (or as JSON). Returns the exit code: 0 when every certificate is readable and
 * valid beyond the window, 1 otherwise.
 */
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { describeError } from '../errors.ts';
import { makeApiClient } from '../kube/api-client.ts';
import { DeploymentClient } from '../kube/deployments.ts';
import { loadKubeConfig } from '../kube/kube-config.ts';
import { RequestCounter } from '../kube/request-counter.ts';
import { SecretClient } from '../kube/secrets.ts';
import { readPackageVersion } from '../version.ts';
import { type ExpiryEntry, allValid, formatEntry } from './expiry-report.ts';
import { readSecretExpiry, secretsFromDeployments } from './expiry-sources.ts';

export interface CheckCommandOptions {
  readonly namespace: string;
  /** Secret names to check; when empty, the Secrets the Deployments mount. */
  readonly secrets: readonly string[];
  readonly deployments: readonly string[];
  /** The window as typed (`30d`), for messages. */
  readonly within: string;
  readonly withinMs: number;
  readonly output: 'text' | 'json';
  readonly kubeconfig?: string | undefined;
  /** @default the system clock */
  readonly now?: Date | undefined;
}

function print(entries: readonly ExpiryEntry[], options: CheckCommandOptions, now: Date): void {
  const window = { now, withinMs: options.withinMs };
  if (options.output === 'json') {
    const certificates = entries.map((entry) => ({
      ...entry,
      notAfter: entry.notAfter?.toISOString(),
    }));
    const report = { namespace: options.namespace, within: options.within, ok: allValid(entries) };
    process.stdout.write(`${JSON.stringify({ ...report, certificates }, null, 2)}\n`);
    return;
  }
  for (const entry of entries)
    process.stdout.write(`${formatEntry(entry, window, options.within)}\n`);
}

/** Runs the check; returns the process exit code. */
export async function runCheckCommand(options: CheckCommandOptions): Promise<number> {
  const now = options.now ?? new Date();
  let entries: ExpiryEntry[];
  try {
    const kc = loadKubeConfig(options.kubeconfig);
    const clientOptions = {
      counter: new RequestCounter(),
      userAgent: `haptic/${readPackageVersion()} (certificates check)`,
    };
    const secrets = new SecretClient(
      makeApiClient(kc, CoreV1Api, clientOptions),
      options.namespace,
    );
    let names = options.secrets;
    entries = [];
    if (names.length === 0) {
      const apps = new DeploymentClient(
        makeApiClient(kc, AppsV1Api, clientOptions),
        options.namespace,
      );
      const found = await secretsFromDeployments(apps, options.deployments);
      entries.push(...found.problems);
      names = found.secrets;
    }
    entries.push(...(await readSecretExpiry(secrets, names, { now, withinMs: options.withinMs })));
  } catch (error) {
    process.stderr.write(`haptic: ${describeError(error)}\n`);
    return 1;
  }
  print(entries, options, now);
  if (allValid(entries)) return 0;
  const failing = entries.filter((entry) => entry.status !== 'ok').length;
  process.stderr.write(
    `haptic: ${failing} of ${entries.length} certificates expire within ${options.within} or cannot be read; ` +
      'renew them (default provider: rerun the renewal Job, see "Monitor renewal failures"; otherwise through their issuer).\n',
  );
  return 1;
}
