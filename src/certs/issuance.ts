/**
 * What the default provider issues: the first CA, the next CA generation (cross-signed by the
 * previous one for the trust overlap), identities under the stored CA, and the material left
 * once a rotation's overlap is over. Pure apart from key generation: `now` comes in.
 */
import { backdateMs, crossSignCa, issueCa, issueLeaf } from '../pki/index.ts';
import type {
  CaRotation,
  IdentityMaterial,
  IdentityRole,
  IssuerMaterial,
} from '../secrets/material.ts';
import { leafRoles } from './renewal-targets.ts';

export interface IssuanceContext {
  /** DNS name of each identity: the agent server name and the controller client name. */
  readonly names: Readonly<Record<IdentityRole, string>>;
  /** Validity of everything issued, in days. */
  readonly validityDays: number;
  readonly now: Date;
}

/** Subject common name of the CA of a generation: `haptic-agent-ca-1`, `haptic-agent-ca-2`, ... */
function caCommonName(generation: number): string {
  return `haptic-agent-ca-${generation}`;
}

/** A moment truncated to whole seconds, as certificates and `previous-ca-until` store it. */
function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

/** A new self-signed CA with a new key, as generation `generation`. */
async function newCa(generation: number, context: IssuanceContext): Promise<IssuerMaterial> {
  const ca = await issueCa({
    commonName: caCommonName(generation),
    validityDays: context.validityDays,
    now: context.now,
  });
  return { certificate: ca.certificate, privateKey: ca.keys.privateKey, generation };
}

/** The first CA (generation 1). */
export function issueFirstIssuer(context: IssuanceContext): Promise<IssuerMaterial> {
  return newCa(1, context);
}

/**
 * The next CA generation with a new key. With an overlap deadline, the new CA is also
 * certified by the current one until then, and the current CA is kept as the previous one;
 * without (the current CA has expired), nothing of the current CA is kept.
 */
export async function rotateIssuer(
  current: IssuerMaterial,
  generation: number,
  overlapUntil: Date | undefined,
  context: IssuanceContext,
): Promise<IssuerMaterial> {
  const next = await newCa(generation, context);
  if (overlapUntil === undefined) return next;
  const until = wholeSeconds(overlapUntil);
  const crossSignedCa = await crossSignCa({
    certificate: next.certificate,
    issuer: { certificate: current.certificate, privateKey: current.privateKey },
    notBefore: new Date(context.now.getTime() - backdateMs),
    notAfter: until,
  });
  const rotation: CaRotation = { previousCa: current.certificate, crossSignedCa, until };
  return { ...next, rotation };
}

/**
 * A new identity (new key) under the issuer's CA: tls.crt is the leaf, followed during an
 * overlap by the cross-signed CA so peers that still trust only the previous CA accept it;
 * ca.crt is the CA; during an overlap previous-ca.crt and previous-ca-until carry the
 * previous CA and the deadline.
 */
export async function issueIdentity(
  issuer: IssuerMaterial,
  role: IdentityRole,
  overlap: CaRotation | undefined,
  context: IssuanceContext,
): Promise<IdentityMaterial> {
  const leaf = await issueLeaf({
    role: leafRoles[role],
    dnsName: context.names[role],
    issuer: { certificate: issuer.certificate, privateKey: issuer.privateKey },
    validityDays: context.validityDays,
    now: context.now,
  });
  const base = { privateKey: leaf.keys.privateKey, trust: [issuer.certificate] };
  if (overlap === undefined) return { ...base, chain: [leaf.certificate] };
  return {
    ...base,
    chain: [leaf.certificate, overlap.crossSignedCa],
    previousTrust: { certificates: [overlap.previousCa], until: overlap.until },
  };
}

/** The identity without the rotation's leftovers: its leaf alone, no previous-CA trust. */
export function withoutPreviousTrust(identity: IdentityMaterial): IdentityMaterial {
  return { chain: [identity.chain[0]], privateKey: identity.privateKey, trust: identity.trust };
}

/** The issuer without the finished rotation's state. */
export function withoutRotation(issuer: IssuerMaterial): IssuerMaterial {
  return {
    certificate: issuer.certificate,
    privateKey: issuer.privateKey,
    generation: issuer.generation,
  };
}
