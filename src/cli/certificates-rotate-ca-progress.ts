/**
 * When a waiting stage of `haptic certificates rotate-ca` is done, judged only from what the
 * Pods reported (the HAProxyTemplateConfig's `status.tls` entries), never by exec:
 *
 * - trust-loaded, identities-loaded, complete: every Pod of both Deployments is converged on
 *   the Secret it mounts, as `haptic certificates status` judges it (same rows, no expiry
 *   window): it trusts exactly ca.crt (plus previous-ca.crt while granted) and presents tls.crt.
 * - exchange-verified: for every agent, the leader's recorded last successful mTLS exchange
 *   (`lastExchange` of the agent's entry) lies after both the agent and the leader loaded
 *   their new certificates (each report's `loadedAt`), and both present the new leaves — so an
 *   authenticated exchange happened with the new identities on both sides.
 *
 * Pure: the result is what is still missing, one sentence per Pod; empty when done.
 */
import type { TlsPeerRole, TlsStateEntryParse } from '../api/tls-state-entry.ts';
import type { RotationStageName } from '../certs/ca-rotation-record.ts';
import type { ExpectedTrust } from '../certs/expected-trust.ts';
import { statusRows } from '../certs/status-rows.ts';

export interface ProgressInput {
  readonly stage: RotationStageName;
  readonly pods: readonly { readonly name: string; readonly role: TlsPeerRole }[];
  /** What each role's Secret holds now. */
  readonly expected: Readonly<Record<TlsPeerRole, ExpectedTrust>>;
  readonly entries: ReadonlyMap<string, TlsStateEntryParse>;
  readonly now: Date;
}

function missingRoles(input: ProgressInput): string[] {
  return (['controller', 'agent'] as const).flatMap((role) =>
    input.pods.some((pod) => pod.role === role) ? [] : [`no ${role} Pod is running`],
  );
}

function convergedLagging(input: ProgressInput): string[] {
  const rows = statusRows({ ...input, issuerCa: undefined, withinMs: 0 });
  return rows
    .filter((row) => !row.converged)
    .map((row) => `${row.role} ${row.pod}: ${row.problems.join('; ')}`);
}

function exchangeLagging(input: ProgressInput): string[] {
  const entry = (pod: string) => {
    const parsed = input.entries.get(pod);
    return parsed?.ok === true ? parsed.entry : undefined;
  };
  return input.pods
    .filter((pod) => pod.role === 'agent')
    .flatMap((pod) => {
      const agent = entry(pod.name);
      const loaded = agent?.loaded;
      if (agent === undefined || loaded === null || loaded === undefined)
        return [`agent ${pod.name}: no TLS state recorded`];
      if (loaded.leaf?.serial !== input.expected.agent.leafSerial)
        return [`agent ${pod.name}: does not present its new certificate`];
      const leader = entry(agent.reportedBy);
      const presented = leader?.loaded;
      if (
        presented === null ||
        presented === undefined ||
        presented.leaf?.serial !== input.expected.controller.leafSerial
      )
        return [
          `agent ${pod.name}: its recording controller ${agent.reportedBy} does not present the new controller certificate yet`,
        ];
      const since = Math.max(Date.parse(loaded.loadedAt), Date.parse(presented.loadedAt));
      const exchanged = agent.lastExchange === null ? Number.NaN : Date.parse(agent.lastExchange);
      return exchanged >= since
        ? []
        : [
            `agent ${pod.name}: no authenticated exchange with ${agent.reportedBy} recorded since both loaded their new certificates (last ${agent.lastExchange ?? 'never'})`,
          ];
    });
}

/** What the stage still waits for; empty when done. */
export function rotationLagging(input: ProgressInput): string[] {
  const missing = missingRoles(input);
  if (missing.length > 0) return missing;
  return input.stage === 'exchange-verified' ? exchangeLagging(input) : convergedLagging(input);
}
