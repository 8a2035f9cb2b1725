import { describe, expect, it } from 'vitest';
import { identityData, makeCa, makeLeaf, now } from '../../test/unit/validation/material.ts';
import type { IdentityMaterial } from '../certs/renewal-input.ts';
import { decodeIdentitySecret } from '../certs/secret-material.ts';
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

function verdicts(
  old: IdentityMaterial | undefined,
  next: IdentityMaterial,
  mode: 'write' | 'live' = 'write',
): string[] {
  return checkTrust({ name: 'id', label: 'haptic/id', old, next, mode, now }).map(
    (f) => `${f.severity} ${f.code} ${f.path}: ${f.message}`,
  );
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
      'a CA added beside the current one',
      plain,
      material({ leaf: oldLeaf, trust: [oldCa.certificate, newCa.certificate] }),
    ],
    ['an unchanged Secret', plain, plain],
  ])('accepts %s', (_, old, next) => {
    expect(verdicts(old, next)).toEqual([]);
  });

  it('rejects an unrelated CA replacing ca.crt without the overlap', () => {
    expect(verdicts(plain, material({ leaf: oldLeaf, trust: [unrelatedCa.certificate] }))).toEqual([
      'error UnrelatedCaReplacement secret/id/ca.crt: ca.crt of Secret haptic/id replaces the CA CN=old-ca with CN=unrelated-ca, which is neither a renewal of it nor introduced with previous-ca.crt set to the current CA: first add the new CA to ca.crt with previous-ca.crt holding the current CA and previous-ca-until at most 24 hours ahead, then replace tls.crt and tls.key, then remove previous-ca.crt and previous-ca-until.',
    ]);
  });

  it('rejects a new CA whose previous-ca.crt is not the current CA', () => {
    const next = material({
      leaf: oldLeaf,
      trust: [newCa.certificate],
      previous: [unrelatedCa.certificate],
      until: inHours(1),
    });
    expect(verdicts(plain, next).map((v) => v.split(' ')[1])).toEqual(['UnrelatedCaReplacement']);
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
