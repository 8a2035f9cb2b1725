import { describe, expect, it } from 'vitest';
import { certificateFingerprint, isSignedBy } from '../pki/index.ts';
import type { IdentityRole, IssuerMaterial } from '../secrets/material.ts';
import type { RenewalInput } from './renewal-input.ts';
import { type PlannedWrite, planWrites } from './renewal-plan.ts';
import { type RenewalAction, decideRenewal } from './renewal-policy.ts';

const day = 86_400_000;
const hour = 3_600_000;
const t0 = new Date('2030-01-01T00:00:00Z');
const at = (offset: number): Date => new Date(t0.getTime() + offset);
const names = { server: 'haptic-agent', client: 'haptic-controller' } as const;

const nothing: RenewalInput = {
  issuer: { state: 'absent' },
  identities: { server: { state: 'absent' }, client: { state: 'absent' } },
  names,
  secretNames: { issuer: 'haptic/ca', server: 'haptic/server', client: 'haptic/client' },
};

/** The input once the writes are stored (as the Secrets would hold them). */
function applied(input: RenewalInput, writes: readonly PlannedWrite[]): RenewalInput {
  let next = input;
  for (const write of writes) {
    next =
      write.target === 'issuer'
        ? { ...next, issuer: { state: 'present', material: write.material } }
        : {
            ...next,
            identities: {
              ...next.identities,
              [write.target]: { state: 'present', material: write.material },
            },
          };
  }
  return next;
}

interface Run {
  readonly input: RenewalInput;
  readonly actions: RenewalAction[];
  readonly writes: string[];
}

/** Decides and carries out until nothing is due, as the reconciler does (at most `limit` writes). */
async function run(input: RenewalInput, now: Date, limit = Infinity): Promise<Run> {
  let state = input;
  const actions: RenewalAction[] = [];
  const writes: string[] = [];
  for (let pass = 0; pass < 5; pass += 1) {
    const decision = decideRenewal(state, now);
    actions.push(decision.action);
    if (decision.action === 'none' || decision.action === 'refuse')
      return { input: state, actions, writes };
    const plan = await planWrites(decision, state, {
      names,
      validityDays: decision.validityDays,
      now,
    });
    for (const write of plan) {
      if (writes.length === limit) return { input: state, actions, writes };
      state = applied(state, [write]);
      writes.push(write.target);
    }
  }
  throw new Error(`no convergence: ${actions.join(', ')}`);
}

/** The input of a rerun, which has not read the replicas' reports (yet). */
function withoutReports(input: RenewalInput): RenewalInput {
  const { issuer, identities, secretNames } = input;
  return { issuer, identities, names: input.names, secretNames };
}

function issuerOf(input: RenewalInput): IssuerMaterial {
  if (input.issuer.state !== 'present') throw new Error('no issuer');
  return input.issuer.material;
}

function identityOf(input: RenewalInput, role: IdentityRole) {
  const identity = input.identities[role];
  if (identity.state !== 'present') throw new Error(`no ${role}`);
  return identity.material;
}

const bootstrapped = await run(nothing, t0);
const rotated = await run(bootstrapped.input, at(335 * day));
const duringOverlap = at(335 * day + 10 * 60_000);
const convergedReplica = { converged: true, problems: [], loadedCas: [], leafSerial: null };
const convergedRotation: RenewalInput = {
  ...rotated.input,
  convergence: {
    replicas: [
      { pod: 'haptic-controller-a', role: 'controller', ...convergedReplica },
      { pod: 'haptic-haproxy-a', role: 'agent', ...convergedReplica },
    ],
    problems: [],
  },
};

describe('planWrites', () => {
  it('bootstraps the issuer first, then both identities, after which nothing is due', () => {
    expect(bootstrapped.actions).toEqual(['bootstrap', 'none']);
    expect(bootstrapped.writes).toEqual(['issuer', 'server', 'client']);
    expect(issuerOf(bootstrapped.input).generation).toBe(1);
    expect(issuerOf(bootstrapped.input).certificate.subject).toBe('CN=haptic-agent-ca-1');
  });

  it('rotates the issuer first, with the previous CA and a one-hour cross-signature, then both identities', () => {
    expect(rotated.actions).toEqual(['rotate-ca', 'none']);
    expect(rotated.writes).toEqual(['issuer', 'server', 'client']);
    const previous = issuerOf(bootstrapped.input).certificate;
    const issuer = issuerOf(rotated.input);
    expect(issuer.generation).toBe(2);
    expect(issuer.rotation?.previousCa).toBe(previous);
    expect(issuer.rotation?.until.toISOString()).toBe(at(335 * day + hour).toISOString());
    for (const role of ['server', 'client'] as const) {
      const identity = identityOf(rotated.input, role);
      const [leaf, cross] = identity.chain;
      expect(isSignedBy(leaf, issuer.certificate)).toBe(true);
      expect(cross && isSignedBy(cross, previous)).toBe(true);
      expect(identity.trust).toEqual([issuer.certificate]);
      expect(identity.previousTrust?.certificates).toEqual([previous]);
      expect(identity.previousTrust?.until).toEqual(issuer.rotation?.until);
    }
  });

  it('cleans up the issuer first and then the identities once the overlap is over', async () => {
    const cleaned = await run(rotated.input, at(335 * day + hour));
    expect(cleaned.actions).toEqual(['cleanup-previous-ca', 'none']);
    expect(cleaned.writes).toEqual(['issuer', 'server', 'client']);
    expect(issuerOf(cleaned.input).rotation).toBeUndefined();
    for (const role of ['server', 'client'] as const) {
      const identity = identityOf(cleaned.input, role);
      expect(identity.chain).toHaveLength(1);
      expect(identity.previousTrust).toBeUndefined();
      expect(identity.privateKey).toBe(identityOf(rotated.input, role).privateKey);
    }
  });

  it('cleans up before the deadline, the same way, once every replica converged', async () => {
    const waiting = await run(rotated.input, duringOverlap);
    expect(waiting.actions).toEqual(['none']);
    const cleaned = await run(convergedRotation, duringOverlap);
    expect(cleaned.actions).toEqual(['cleanup-previous-ca', 'none']);
    expect(cleaned.writes).toEqual(['issuer', 'server', 'client']);
    expect(issuerOf(cleaned.input).rotation).toBeUndefined();
    for (const role of ['server', 'client'] as const) {
      expect(identityOf(cleaned.input, role).previousTrust).toBeUndefined();
      expect(identityOf(cleaned.input, role).chain).toHaveLength(1);
    }
  });

  for (const [phase, input, now, writes] of [
    ['bootstrap', nothing, t0, 3],
    ['rotation', bootstrapped.input, at(335 * day), 3],
    ['clean-up', rotated.input, at(335 * day + hour), 3],
    // Resumed without the replicas' reports: the issuer already forgot the rotation.
    ['early clean-up', convergedRotation, duringOverlap, 3],
  ] as const) {
    it(`finishes the ${phase} in the same CA generation when interrupted after any write`, async () => {
      const complete = await run(input, now);
      for (let done = 1; done < writes; done += 1) {
        const interrupted = await run(input, now, done);
        const resumed = await run(withoutReports(interrupted.input), now);
        expect(resumed.actions).not.toContain('bootstrap');
        expect(resumed.actions).not.toContain('rotate-ca');
        expect(resumed.actions.at(-1)).toBe('none');
        const issuer = issuerOf(resumed.input);
        expect(issuer.generation).toBe(issuerOf(complete.input).generation);
        expect(certificateFingerprint(issuer.certificate)).toBe(
          certificateFingerprint(issuerOf(interrupted.input).certificate),
        );
      }
    });
  }

  it('plans nothing for a refusal', async () => {
    const orphan: RenewalInput = {
      ...nothing,
      identities: bootstrapped.input.identities,
    };
    const decision = decideRenewal(orphan, t0);
    expect(decision.action).toBe('refuse');
    expect(await planWrites(decision, orphan, { names, validityDays: 365, now: t0 })).toEqual([]);
  });
});
