import { describe, expect, it } from 'vitest';
import { identityData, makeCa, makeLeaf, now } from '../../test/unit/validation/material.ts';
import type { IdentityMaterial } from '../secrets/material.ts';
import { decodeIdentitySecret } from '../secrets/identity-secret.ts';
import { checkTrust } from './trust-rules.ts';
import type { IdentityParts } from '../../test/unit/validation/material.ts';

const oldCa = await makeCa('old-ca');
const newCa = await makeCa('new-ca');
const renewedOldCa = await makeCa('old-ca', { keys: oldCa.keys, days: 730 });
const unrelatedCa = await makeCa('unrelated-ca');
const oldLeaf = await makeLeaf('agent', 'haptic-agent', oldCa);
const newLeaf = await makeLeaf('agent', 'haptic-agent', newCa);

function material(parts: IdentityParts): IdentityMaterial {
  const state = decodeIdentitySecret(identityData(parts), 'Secret haptic/id');
  if (state.state !== 'present') throw new Error(`test material: ${JSON.stringify(state)}`);
  return state.material;
}

const inHours = (hours: number): string =>
  `${new Date(now.getTime() + hours * 3_600_000).toISOString().slice(0, 19)}Z`;

const plain = material({ leaf: oldLeaf, trust: [oldCa.certificate] });
const stage1 = material({
  leaf: oldLeaf,
  trust: [newCa.certificate],
  previous: [oldCa.certificate],
  until: inHours(1),
});
const stage2 = material({
  leaf: newLeaf,
  trust: [newCa.certificate],
  previous: [oldCa.certificate],
  until: inHours(1),
});
const stage3 = material({ leaf: newLeaf, trust: [newCa.certificate] });
const bundle = material({ leaf: oldLeaf, trust: [oldCa.certificate, unrelatedCa.certificate] });
const expiredStage1 = material({
  leaf: oldLeaf,
  trust: [newCa.certificate],
  previous: [oldCa.certificate],
  until: inHours(-1),
});

function verdicts(
  old: IdentityMaterial | undefined,
  next: IdentityMaterial,
  mode: 'write' | 'live' = 'write',
  peer?: IdentityMaterial,
): string[] {
  return checkTrust({
    name: 'id',
    label: 'haptic/id',
    old,
    next,
    ...(peer === undefined ? {} : { peer }),
    mode,
    now,
  }).map((f) => `${f.severity} ${f.code} ${f.path}: ${f.message}`);
}

/** `severity code key` of a verdict line. */
function code(verdict: string): string {
  const [severity, name, path] = verdict.split(' ');
  return `${severity ?? ''} ${name ?? ''} ${(path ?? '').replace(/^secret\/id\//, '').replace(/:$/, '')}`;
}

describe('trust transitions', () => {
  it.each([
    ['stage 1: the new CA with the current CA as previous-ca.crt', plain, stage1],
    ['stage 2: new identities under the new CA', stage1, stage2],
    ['stage 3: previous trust removed', stage2, stage3],
    [
      'a renewal of the CA with its own key',
      plain,
      material({ leaf: oldLeaf, trust: [renewedOldCa.certificate] }),
    ],
    [
      'the renewed CA beside the current one',
      plain,
      material({ leaf: oldLeaf, trust: [oldCa.certificate, renewedOldCa.certificate] }),
    ],
    ['an unchanged Secret', plain, plain],
    ['a CA dropped from a bundle', bundle, plain],
    [
      'stage 2 after the deadline passed (the late identities are still replaced)',
      expiredStage1,
      material({
        leaf: newLeaf,
        trust: [newCa.certificate],
        previous: [oldCa.certificate],
        until: inHours(-1),
      }),
    ],
  ])('accepts %s', (_, old, next) => {
    expect(verdicts(old, next).filter((v) => v.startsWith('error'))).toEqual([]);
  });

  it('rejects an unrelated CA replacing ca.crt without the overlap', () => {
    expect(verdicts(plain, material({ leaf: oldLeaf, trust: [unrelatedCa.certificate] }))).toEqual([
      'error UnrelatedCaReplacement secret/id/ca.crt: ca.crt of Secret haptic/id adds the CA CN=unrelated-ca, which is neither a CA the Secret trusts now (CN=old-ca) nor a renewal of one (same subject and key), and previous-ca.crt does not keep the current ca.crt: ' +
        'a new CA enters only by a rotation: set ca.crt to the new CA, previous-ca.crt to the current ca.crt and previous-ca-until at most 24 hours ahead in one write, then replace tls.crt and tls.key, then remove previous-ca.crt and previous-ca-until.',
    ]);
  });

  it('rejects an unrelated CA added beside the current one (the first write of a two-write replacement)', () => {
    expect(verdicts(plain, bundle).map(code)).toEqual(['error UnrelatedCaReplacement ca.crt']);
  });

  it('rejects an unrelated CA however the writes are split, and accepts the same CA by rotation', () => {
    // Each sequence starts at `plain` and is applied write by write; a write that is denied
    // is not stored, so the next one is judged against the last admitted state.
    const run = (steps: readonly IdentityMaterial[]): string[] => {
      let current = plain;
      const denials: string[] = [];
      for (const [index, step] of steps.entries()) {
        const errors = verdicts(current, step).filter((v) => v.startsWith('error'));
        if (errors.length === 0) current = step;
        else denials.push(`write ${String(index + 1)}: ${errors.map(code).join(', ')}`);
      }
      return denials;
    };
    const attackerOnly = material({ leaf: oldLeaf, trust: [unrelatedCa.certificate] });
    expect(run([bundle, attackerOnly])).toEqual([
      'write 1: error UnrelatedCaReplacement ca.crt',
      'write 2: error UnrelatedCaReplacement ca.crt',
    ]);
    expect(
      run([
        material({
          leaf: oldLeaf,
          trust: [oldCa.certificate],
          previous: [unrelatedCa.certificate],
          until: inHours(1),
        }),
        attackerOnly,
      ]),
    ).toEqual([
      'write 1: error UnrelatedCaReplacement previous-ca.crt',
      'write 2: error UnrelatedCaReplacement ca.crt',
    ]);
    expect(run([stage1, stage2, stage3])).toEqual([]);
  });

  it('rejects bringing back a previous CA whose deadline passed', () => {
    const refreshed = material({
      leaf: oldLeaf,
      trust: [newCa.certificate],
      previous: [oldCa.certificate],
      until: inHours(1),
    });
    expect(verdicts(expiredStage1, refreshed).map(code)).toEqual([
      'error UnrelatedCaReplacement previous-ca.crt',
    ]);
  });

  it('rejects a new CA whose previous-ca.crt is not the current CA', () => {
    const next = material({
      leaf: oldLeaf,
      trust: [newCa.certificate],
      previous: [unrelatedCa.certificate],
      until: inHours(1),
    });
    expect(verdicts(plain, next).map(code)).toEqual(['error UnrelatedCaReplacement ca.crt']);
  });

  it('rejects a new rotation while previous-ca.crt is still present', () => {
    const next = material({
      leaf: oldLeaf,
      trust: [unrelatedCa.certificate],
      previous: [newCa.certificate],
      until: inHours(1),
    });
    expect(verdicts(stage1, next)).toEqual([
      'error RotationInProgress secret/id/ca.crt: Secret haptic/id is still in a CA rotation (previous-ca.crt is present): complete it by removing previous-ca.crt and previous-ca-until before starting another one.',
    ]);
  });

  it('rejects a previous-ca-until 48 hours ahead', () => {
    const next = material({
      leaf: oldLeaf,
      trust: [newCa.certificate],
      previous: [oldCa.certificate],
      until: inHours(48),
    });
    expect(verdicts(plain, next)).toEqual([
      'error PreviousTrustDeadlineTooFar secret/id/previous-ca-until: previous-ca-until of Secret haptic/id is 2030-03-03T12:00:00Z, more than 24 hours after 2030-03-01T12:00:00Z: HAPTIC rejects deadlines more than 24 hours away; choose a deadline within 24 hours, for example one hour ahead.',
    ]);
  });

  it('accepts a deadline exactly 24 hours ahead', () => {
    const next = material({
      leaf: oldLeaf,
      trust: [newCa.certificate],
      previous: [oldCa.certificate],
      until: inHours(24),
    });
    expect(verdicts(plain, next)).toEqual([]);
  });

  it('rejects a newly set deadline in the past', () => {
    const next = material({
      leaf: oldLeaf,
      trust: [newCa.certificate],
      previous: [oldCa.certificate],
      until: inHours(-1),
    });
    expect(verdicts(plain, next)).toEqual([
      'error PreviousTrustDeadlinePassed secret/id/previous-ca-until: previous-ca-until of Secret haptic/id is 2030-03-01T11:00:00Z, which is not in the future: set a deadline ahead of now and at most 24 hours away, or remove previous-ca.crt and previous-ca-until.',
    ]);
  });

  it('only warns about a stored deadline that passed, so late identities can still be replaced', () => {
    const late = material({
      leaf: oldLeaf,
      trust: [newCa.certificate],
      previous: [oldCa.certificate],
      until: inHours(-1),
    });
    const replaced = material({
      leaf: newLeaf,
      trust: [newCa.certificate],
      previous: [oldCa.certificate],
      until: inHours(-1),
    });
    expect(verdicts(late, replaced)).toEqual([
      'warning PreviousTrustExpired secret/id/previous-ca-until: previous-ca.crt of Secret haptic/id stopped granting trust at 2030-03-01T11:00:00Z; remove previous-ca.crt and previous-ca-until.',
    ]);
  });

  it('treats a live Secret deadline as stored: passed warns, too far rejects', () => {
    const passed = material({
      leaf: oldLeaf,
      trust: [newCa.certificate],
      previous: [oldCa.certificate],
      until: inHours(-1),
    });
    const far = material({
      leaf: oldLeaf,
      trust: [newCa.certificate],
      previous: [oldCa.certificate],
      until: inHours(30),
    });
    expect(verdicts(undefined, passed, 'live').map((v) => v.split(' ')[1])).toEqual([
      'PreviousTrustExpired',
    ]);
    expect(verdicts(undefined, far, 'live').map((v) => v.split(' ')[1])).toEqual([
      'PreviousTrustDeadlineTooFar',
    ]);
  });
});

describe('trust as found in the cluster (preflight)', () => {
  const peerOld = material({ leaf: oldLeaf, trust: [oldCa.certificate] });
  const peerNew = material({ leaf: newLeaf, trust: [newCa.certificate] });
  const crossed = material({ leaf: oldLeaf, trust: [oldCa.certificate, newCa.certificate] });

  it.each([
    ['one CA that issued both identities', plain, peerOld],
    ['each identity from its own CA, both CAs in ca.crt', crossed, peerNew],
    ['stage 1 of a rotation', stage1, peerOld],
    ['stage 2 with the peer not yet replaced', stage2, peerOld],
    ['stage 2 with both identities replaced', stage2, peerNew],
    ['stage 3', stage3, peerNew],
    ['a rotation whose deadline passed (the identity rules report it)', expiredStage1, peerOld],
  ])('accepts %s', (_, next, peer) => {
    expect(verdicts(undefined, next, 'live', peer).filter((v) => v.startsWith('error'))).toEqual(
      [],
    );
  });

  it('rejects a CA in ca.crt that issued neither identity, naming it and the way to move to it', () => {
    expect(verdicts(undefined, bundle, 'live', peerOld)).toEqual([
      'error UnrelatedCaReplacement secret/id/ca.crt: ca.crt of Secret haptic/id trusts the CA CN=unrelated-ca, which issued neither the agent nor the controller certificate of this release: remove it from ca.crt; to move to that CA, ' +
        'set ca.crt to the new CA, previous-ca.crt to the current ca.crt and previous-ca-until at most 24 hours ahead in one write, then replace tls.crt and tls.key, then remove previous-ca.crt and previous-ca-until.',
    ]);
  });

  it('leaves a chain no CA of ca.crt anchors to the identity rules (IdentityUntrusted), not calling ca.crt stray', () => {
    const unanchored = material({ leaf: newLeaf, trust: [oldCa.certificate] });
    expect(verdicts(undefined, unanchored, 'live', peerOld)).toEqual([]);
  });

  it('without a readable peer, judges by its own certificate only', () => {
    expect(verdicts(undefined, crossed, 'live').map(code)).toEqual([
      'error UnrelatedCaReplacement ca.crt',
    ]);
  });
});
