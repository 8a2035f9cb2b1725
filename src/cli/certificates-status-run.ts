/**
 * `haptic certificates status` as a process: reads the release's two Deployments, their Pods,
 * the identity Secrets they mount (public certificates only), the issuer Secret's CA when the
 * default provider has one, and the Pods' TLS state entries in the HAProxyTemplateConfig
 * status; prints one row per Pod. Returns the exit code: 0 converged, 1 not, 2 when the
 * cluster cannot be read.
 */
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1Deployment } from '@kubernetes/client-node';
import { agentTlsVolume } from '../certs/expiry-sources.ts';
import type { TlsPeerRole, TlsStateEntryParse } from '../controller/tls-state-entry.ts';
import { parseTlsStateEntry, tlsStatusField } from '../controller/tls-state-entry.ts';
import {
  templateConfigGroup,
  templateConfigPlural,
  templateConfigVersion,
} from '../controller/template-config.ts';
import { describeError } from '../errors.ts';
import { makeApiClient } from '../kube/api-client.ts';
import { apiStatus } from '../kube/api-errors.ts';
import { loadKubeConfig } from '../kube/kube-config.ts';
import { RequestCounter } from '../kube/request-counter.ts';
import { decodeCertificateChain, sha256Fingerprint, type x509 } from '../pki/index.ts';
import {
  identitySecretKeys,
  issuerSecretKeys,
  maxPreviousTrustAheadMs,
} from '../secrets/layout.ts';
import { parseUtcTimestamp } from '../secrets/utc-timestamp.ts';
import { certificateSerial } from '../tls/loaded-report.ts';
import { componentName, releaseFullname } from '../validation/chart-names.ts';
import { readPackageVersion } from '../version.ts';
import { formatStatusJson, formatStatusTable } from './certificates-status-format.ts';
import { type ExpectedTrust, statusRows } from './certificates-status-rows.ts';

export interface StatusCommandOptions {
  readonly namespace: string;
  readonly release: string;
  /** The window as typed (`30d`), for messages. */
  readonly within: string;
  readonly withinMs: number;
  readonly output: 'table' | 'json';
  readonly kubeconfig?: string | undefined;
}

/** A problem reading the cluster: exit 2. */
class ReadError extends Error {}

const noOverrides = { nameOverride: '', fullnameOverride: '' };

function certificates(base64: string | undefined): readonly x509.X509Certificate[] {
  if (base64 === undefined || base64 === '') return [];
  return decodeCertificateChain(Buffer.from(base64, 'base64'));
}

function fingerprints(base64: string | undefined): string[] {
  return certificates(base64).map(sha256Fingerprint);
}

interface Workload {
  readonly role: TlsPeerRole;
  readonly deployment: V1Deployment;
  readonly secret: string;
  readonly selector: string;
}

function workloadOf(
  role: TlsPeerRole,
  name: string,
  deployment: V1Deployment | undefined,
  namespace: string,
): Workload {
  if (deployment === undefined)
    throw new ReadError(`Deployment ${namespace}/${name} does not exist; check -n and --release.`);
  const secret = deployment.spec?.template.spec?.volumes?.find((v) => v.name === agentTlsVolume)
    ?.secret?.secretName;
  if (secret === undefined || secret === '')
    throw new ReadError(
      `Deployment ${namespace}/${name} has no ${agentTlsVolume} Secret volume; the release does not use mTLS.`,
    );
  const labels = deployment.spec?.selector.matchLabels ?? {};
  const selector = Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
  return { role, deployment, secret, selector };
}

function templateConfigName(controller: V1Deployment, fallback: string): string {
  const args = controller.spec?.template.spec?.containers.flatMap((c) => c.args ?? []) ?? [];
  const flag = args.find((arg) => arg.startsWith('--template-config='));
  return flag === undefined ? fallback : flag.slice('--template-config='.length);
}

/** Runs the command; returns the process exit code. */
export async function runStatusCommand(options: StatusCommandOptions): Promise<number> {
  const now = new Date();
  const { namespace } = options;
  try {
    const kc = loadKubeConfig(options.kubeconfig);
    const client = {
      counter: new RequestCounter(),
      userAgent: `haptic/${readPackageVersion()} (certificates status)`,
    };
    const apps = makeApiClient(kc, AppsV1Api, client);
    const core = makeApiClient(kc, CoreV1Api, client);
    const custom = makeApiClient(kc, CustomObjectsApi, client);
    const orAbsent = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await read();
      } catch (error) {
        if (apiStatus(error) === 404) return undefined;
        throw error;
      }
    };
    const fullname = releaseFullname(options.release, noOverrides);
    const names = {
      controller: componentName(fullname, 'controller'),
      agent: componentName(fullname, 'haproxy'),
    };
    const load = async (role: TlsPeerRole): Promise<Workload> =>
      workloadOf(
        role,
        names[role],
        await orAbsent(() => apps.readNamespacedDeployment({ name: names[role], namespace })),
        namespace,
      );
    const controller = await load('controller');
    const workloads = [controller, await load('agent')];
    const expected = {} as Record<TlsPeerRole, ExpectedTrust>;
    const pods: { name: string; role: TlsPeerRole }[] = [];
    for (const workload of workloads) {
      const secret = await orAbsent(() =>
        core.readNamespacedSecret({ name: workload.secret, namespace }),
      );
      if (secret === undefined)
        throw new ReadError(
          `Secret ${namespace}/${workload.secret} (mounted by the ${workload.role}s) does not exist.`,
        );
      const data = secret.data ?? {};
      const until = parseUtcTimestamp(
        Buffer.from(data[identitySecretKeys.previousTrustUntil] ?? '', 'base64').toString('utf8'),
      );
      const ahead = until === undefined ? 0 : until.getTime() - now.getTime();
      const [leaf] = certificates(data[identitySecretKeys.certificate]);
      expected[workload.role] = {
        secret: workload.secret,
        cas: fingerprints(data[identitySecretKeys.trust]),
        previousCas:
          ahead > 0 && ahead <= maxPreviousTrustAheadMs
            ? fingerprints(data[identitySecretKeys.previousTrust])
            : [],
        leafSerial: leaf === undefined ? undefined : certificateSerial(leaf),
      };
      const list = await core.listNamespacedPod({ namespace, labelSelector: workload.selector });
      for (const pod of list.items) {
        if (pod.metadata?.deletionTimestamp !== undefined) continue;
        pods.push({ name: pod.metadata?.name ?? '', role: workload.role });
      }
    }
    const issuer = await orAbsent(() =>
      core.readNamespacedSecret({ name: componentName(fullname, 'agent-ca'), namespace }),
    );
    const issuerCa = fingerprints(issuer?.data?.[issuerSecretKeys.certificate])[0];
    const configName = templateConfigName(controller.deployment, fullname);
    const config = (await orAbsent(() =>
      custom.getNamespacedCustomObject({
        group: templateConfigGroup,
        version: templateConfigVersion,
        namespace,
        plural: templateConfigPlural,
        name: configName,
      }),
    )) as { status?: Record<string, unknown> } | undefined;
    const recorded = config?.status?.[tlsStatusField];
    const entries = new Map<string, TlsStateEntryParse>();
    if (typeof recorded === 'object' && recorded !== null && !Array.isArray(recorded)) {
      for (const [pod, value] of Object.entries(recorded))
        entries.set(pod, parseTlsStateEntry(value, `status.${tlsStatusField}.${pod}`));
    }
    const rows = statusRows({ pods, expected, issuerCa, entries, now, withinMs: options.withinMs });
    const converged = rows.length > 0 && rows.every((row) => row.converged);
    process.stdout.write(
      `${
        options.output === 'json'
          ? formatStatusJson({
              namespace,
              release: options.release,
              within: options.within,
              converged,
              pods: rows,
            })
          : formatStatusTable(rows, now)
      }\n`,
    );
    if (converged) return 0;
    const lagging = rows.filter((row) => !row.converged).map((row) => row.pod);
    process.stderr.write(
      lagging.length === 0
        ? `haptic: no Pods of release ${options.release} in namespace ${namespace}.\n`
        : `haptic: ${lagging.join(', ')} ${lagging.length === 1 ? 'has' : 'have'} not converged on the mounted certificates or expire within ${options.within}; see the STATUS column.\n`,
    );
    return 1;
  } catch (error) {
    process.stderr.write(`haptic: ${describeError(error)}\n`);
    return 2;
  }
}
