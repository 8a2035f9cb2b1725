/**
 * Whether every current replica of both Deployments has loaded what the identity Secrets hold
 * now — the input that lets the renewal Job end a CA rotation's overlap before its deadline.
 * Pure. Each replica is judged as `haptic certificates status` judges its row (`statusRows`,
 * with no expiry window), so the Job and the operator's view never disagree about a replica;
 * the renewal run makes that call and passes the rows in.
 */
import type { ExpectedTrust } from './expected-trust.ts';
import { shortFingerprint } from '../pki/fingerprint.ts';

export type ReplicaRole = 'controller' | 'agent';

/** One replica as the gate sees it (a subset of a status row). */
export interface ReplicaState {
  readonly pod: string;
  readonly role: ReplicaRole;
  readonly converged: boolean;
  /** Why not, one clause each (empty when converged). */
  readonly problems: readonly string[];
  /** What it reports: loaded CA fingerprints and its certificate's serial. */
  readonly loadedCas: readonly string[];
  readonly leafSerial: string | null;
}

/** The convergence input of the renewal policy (`RenewalInput.convergence`). */
export interface ReplicaConvergence {
  readonly replicas: readonly ReplicaState[];
  /** What keeps convergence unknown besides the replicas' own problems; sentences. */
  readonly problems: readonly string[];
}

const roleNames = { controller: 'controller', agent: 'HAProxy' } as const;

/**
 * The convergence of the judged replicas; `problems` are the reader's (say, no
 * HAProxyTemplateConfig). A role without any replica is a problem too: nobody can report it.
 */
export function replicaConvergence(
  rows: readonly ReplicaState[],
  problems: readonly string[],
  expected: Readonly<Record<ReplicaRole, ExpectedTrust>>,
): ReplicaConvergence {
  const missing = (['controller', 'agent'] as const)
    .filter((role) => !rows.some((row) => row.role === role))
    .map(
      (role) =>
        `No current ${roleNames[role]} replica mounts Secret ${expected[role].secret}, so none can report it.`,
    );
  return {
    replicas: rows.map(({ pod, role, converged, problems: why, loadedCas, leafSerial }) => ({
      pod,
      role,
      converged,
      problems: why,
      loadedCas,
      leafSerial,
    })),
    problems: [...problems, ...missing],
  };
}

/** True when replicas exist, each reports the expected material, and nothing else is unknown. */
export function everyReplicaConverged(convergence: ReplicaConvergence): boolean {
  return (
    convergence.problems.length === 0 &&
    convergence.replicas.length > 0 &&
    convergence.replicas.every((replica) => replica.converged)
  );
}

/** The replicas that have not converged. */
export function laggingReplicas(convergence: ReplicaConvergence): readonly ReplicaState[] {
  return convergence.replicas.filter((replica) => !replica.converged);
}

function reported(replica: ReplicaState): string {
  const cas =
    replica.loadedCas.length === 0
      ? 'no CA'
      : `CA ${replica.loadedCas.map(shortFingerprint).join(', ')}`;
  const serial =
    replica.leafSerial === null ? 'no certificate' : `certificate serial ${replica.leafSerial}`;
  return `it reports ${cas} and ${serial}`;
}

/** Why the replicas have not converged, as sentences naming each lagging Pod and what it reports. */
export function convergenceGaps(convergence: ReplicaConvergence): string {
  return [
    ...laggingReplicas(convergence).map(
      (replica) =>
        `Pod ${replica.pod} (${replica.role}): ${replica.problems.join('; ')}; ${reported(replica)}.`,
    ),
    ...convergence.problems,
  ].join(' ');
}
