/**
 * From a renewal decision to the writes that carry it out, in the order of the rotation
 * protocol (`renewal-policy.ts`): the issuer Secret first when a CA is created — so the
 * generation and the rotation state are stored before any identity acts on them — and first
 * when a rotation is cleaned up — so an early clean-up, once begun, is not undone by an open
 * overlap. A run interrupted between two writes leaves a state from which the policy decides
 * the rest of the same generation.
 */
import type { RenewalDecision } from './renewal-policy.ts';
import type {
  CaRotation,
  IdentityMaterial,
  IdentityRole,
  IssuerMaterial,
} from '../secrets/material.ts';
import type { RenewalInput } from './renewal-input.ts';
import {
  type IssuanceContext,
  issueFirstIssuer,
  issueIdentity,
  rotateIssuer,
  withoutPreviousTrust,
  withoutRotation,
} from './issuance.ts';

/** One Secret's new content. */
export type PlannedWrite =
  | { readonly target: 'issuer'; readonly material: IssuerMaterial }
  | { readonly target: IdentityRole; readonly material: IdentityMaterial };

/** The material to write, in order; empty for `none` and `refuse`. */
export async function planWrites(
  decision: RenewalDecision,
  input: RenewalInput,
  context: IssuanceContext,
): Promise<readonly PlannedWrite[]> {
  const issuer = input.issuer.state === 'present' ? input.issuer.material : undefined;
  switch (decision.action) {
    case 'none':
    case 'refuse':
      return [];
    case 'bootstrap': {
      const first = await issueFirstIssuer(context);
      const identities = await identitiesUnder(first, undefined, decision, context);
      return [{ target: 'issuer', material: first }, ...identities];
    }
    case 'rotate-ca': {
      if (issuer === undefined) return [];
      const generation = decision.generation ?? issuer.generation + 1;
      const next = await rotateIssuer(issuer, generation, decision.overlapUntil, context);
      const identities = await identitiesUnder(next, next.rotation, decision, context);
      return [{ target: 'issuer', material: next }, ...identities];
    }
    case 'reissue-identities': {
      if (issuer === undefined) return [];
      const overlap = decision.overlapUntil === undefined ? undefined : issuer.rotation;
      return identitiesUnder(issuer, overlap, decision, context);
    }
    case 'cleanup-previous-ca':
      return issuer === undefined ? [] : cleanup(issuer, decision, input);
  }
}

/** Each identity the decision names, issued under the issuer (and its open overlap). */
async function identitiesUnder(
  issuer: IssuerMaterial,
  overlap: CaRotation | undefined,
  decision: RenewalDecision,
  context: IssuanceContext,
): Promise<PlannedWrite[]> {
  const writes: PlannedWrite[] = [];
  for (const role of decision.identities) {
    writes.push({ target: role, material: await issueIdentity(issuer, role, overlap, context) });
  }
  return writes;
}

/**
 * The issuer without its ended rotation (the policy only cleans up a rotation whose deadline
 * passed or whose replicas all converged), then each identity without previous trust: once
 * the issuer forgot the rotation, identity leftovers are stale and a rerun removes them.
 */
function cleanup(
  issuer: IssuerMaterial,
  decision: RenewalDecision,
  input: RenewalInput,
): PlannedWrite[] {
  const writes: PlannedWrite[] =
    issuer.rotation === undefined ? [] : [{ target: 'issuer', material: withoutRotation(issuer) }];
  for (const role of decision.identities) {
    const identity = input.identities[role];
    if (identity.state === 'present') {
      writes.push({ target: role, material: withoutPreviousTrust(identity.material) });
    }
  }
  return writes;
}
