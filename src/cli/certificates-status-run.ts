/**
 * `haptic certificates status` as a process: reads the release (certificates-release-reader.ts)
 * — its two Deployments, their Pods, the identity Secrets they mount (public certificates
 * only), the issuer Secret's CA when the default provider has one, and the Pods' TLS state
 * entries in the HAProxyTemplateConfig status — and prints one row per Pod. Returns the exit
 * code: 0 converged, 1 not, 2 when the cluster cannot be read.
 */
import type { TlsPeerRole } from '../api/tls-state-entry.ts';
import { describeError } from '../errors.ts';
import { issuerSecretKeys } from '../secrets/layout.ts';
import { connectRelease, readReleaseTls } from './certificates-release-reader.ts';
import {
  type ExpectedTrust,
  encodedFingerprints,
  expectedTrustOf,
} from '../certs/expected-trust.ts';
import { formatStatusJson, formatStatusTable } from './certificates-status-format.ts';
import { statusRows } from '../certs/status-rows.ts';

export interface StatusCommandOptions {
  readonly namespace: string;
  readonly release: string;
  /** The window as typed (`30d`), for messages. */
  readonly within: string;
  readonly withinMs: number;
  readonly output: 'table' | 'json';
  readonly kubeconfig?: string | undefined;
}

/** Runs the command; returns the process exit code. */
export async function runStatusCommand(options: StatusCommandOptions): Promise<number> {
  const now = new Date();
  const { namespace } = options;
  try {
    const clients = connectRelease(options.kubeconfig, 'status');
    const { workloads, pods, issuer, entries } = await readReleaseTls(clients, options);
    const expected = {} as Record<TlsPeerRole, ExpectedTrust>;
    for (const workload of [workloads.controller, workloads.agent])
      expected[workload.role] = expectedTrustOf(
        workload.secretName,
        workload.secret.data ?? {},
        now,
      );
    const issuerCa = encodedFingerprints(issuer?.data?.[issuerSecretKeys.certificate])[0];
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
