/**
 * Authenticating the peer of a management connection against the trust in force now: a chain
 * to an anchor, the extended key usage of its role, and its DNS name. Pure; both peers use it
 * (the agent for the controller's clientAuth certificate on every request, the controller for
 * the agent's serverAuth certificate on every new connection).
 */
import { type Purpose, type Certificate, verifyChain } from '../pki/index.ts';
import type { Problem } from '../problem.ts';
import { type PeerReason, peerReasons } from './reasons.ts';
import type { EffectiveTrust } from './tls-material.ts';

export interface PeerExpectation {
  /** serverAuth for an agent, clientAuth for a controller. */
  readonly purpose: Purpose;
  /** The DNS SAN the peer's certificate must carry. */
  readonly dnsName: string;
  /** How messages name the peer, for example `the controller`. */
  readonly role: string;
}

export type PeerVerification =
  | { readonly ok: true; readonly subject: string; readonly notAfter: Date }
  | ({ readonly ok: false } & Problem<PeerReason>);

/** Verifies the peer's presented chain at `now`. */
export function verifyPeer(
  chain: readonly Certificate[],
  trust: EffectiveTrust,
  expectation: PeerExpectation,
  now: Date,
): PeerVerification {
  const [leaf] = chain;
  if (leaf === undefined) {
    return {
      ok: false,
      reason: peerReasons.NoPeerCertificate,
      message: `${capitalize(expectation.role)} presented no certificate; configure its identity (tls.crt, tls.key).`,
    };
  }
  const result = verifyChain({
    chain,
    anchors: trust.anchors,
    now,
    purpose: expectation.purpose,
    dnsName: expectation.dnsName,
  });
  if (!result.ok) {
    return {
      ok: false,
      reason: result.reason,
      message: `${capitalize(expectation.role)} is not authorised: ${result.message}`,
    };
  }
  return { ok: true, subject: leaf.subject, notAfter: leaf.notAfter };
}

function capitalize(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}
