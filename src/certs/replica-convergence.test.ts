import { describe, expect, it } from 'vitest';
import {
  type ReplicaState,
  convergenceGaps,
  everyReplicaConverged,
  laggingReplicas,
  replicaConvergence,
} from './replica-convergence.ts';

const ca = 'ab'.repeat(32);
const expected = {
  agent: { secret: 'haptic/agent', cas: [ca], previousCas: [], leafSerial: '0a' },
  controller: { secret: 'haptic/controller', cas: [ca], previousCas: [], leafSerial: '0b' },
} as const;
const replica = (pod: string, role: 'agent' | 'controller', problems: string[] = []) =>
  ({
    pod,
    role,
    converged: problems.length === 0,
    problems,
    loadedCas: [ca],
    leafSerial: '0a',
  }) satisfies ReplicaState;

describe('replicaConvergence', () => {
  it('is converged when every replica of both roles is, and nothing else is unknown', () => {
    const rows = [replica('c-1', 'controller'), replica('h-1', 'agent'), replica('h-2', 'agent')];
    const convergence = replicaConvergence(rows, [], expected);
    expect(everyReplicaConverged(convergence)).toBe(true);
    expect(laggingReplicas(convergence)).toEqual([]);
    expect(convergenceGaps(convergence)).toBe('');
  });

  it('names a lagging replica, why, and what it reports', () => {
    const rows = [
      replica('c-1', 'controller'),
      replica('h-1', 'agent', ['it has not loaded tls.crt of Secret haptic/agent yet']),
    ];
    const convergence = replicaConvergence(rows, [], expected);
    expect(everyReplicaConverged(convergence)).toBe(false);
    expect(convergenceGaps(convergence)).toBe(
      `Pod h-1 (agent): it has not loaded tls.crt of Secret haptic/agent yet; it reports CA ${ca.slice(0, 12)} and certificate serial 0a.`,
    );
  });

  it('is not converged when a role has no replica, saying which Secret nobody reports', () => {
    const convergence = replicaConvergence([replica('c-1', 'controller')], [], expected);
    expect(everyReplicaConverged(convergence)).toBe(false);
    expect(convergenceGaps(convergence)).toBe(
      'No current HAProxy replica mounts Secret haptic/agent, so none can report it.',
    );
  });

  it('is not converged while the reader could not find every report, even if all rows are', () => {
    const problem = 'HAProxyTemplateConfig haptic/haptic does not exist.';
    const rows = [replica('c-1', 'controller'), replica('h-1', 'agent')];
    const convergence = replicaConvergence(rows, [problem], expected);
    expect(everyReplicaConverged(convergence)).toBe(false);
    expect(convergenceGaps(convergence)).toBe(problem);
  });

  it('is not converged without any replica', () => {
    expect(everyReplicaConverged({ replicas: [], problems: [] })).toBe(false);
  });
});
