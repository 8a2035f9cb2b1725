import { describe, expect, it } from 'vitest';
import type { Certificate } from './certificate.ts';
import { type VerifyChainOptions, chainFailureReasons, verifyChain } from './chain.ts';
import { certificateFingerprint } from './fingerprint.ts';
import {
  type CertificateAuthority,
  backdateMs,
  crossSignCa,
  issueCa,
  issueLeaf,
} from './generate.ts';

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;
const now = new Date('2030-03-01T12:00:00Z');
const at = (offsetMs: number): Date => new Date(now.getTime() + offsetMs);

async function authority(
  commonName: string,
  issuedAt = now,
  validityDays = 365,
): Promise<CertificateAuthority> {
  const { certificate, keys } = await issueCa({ commonName, validityDays, now: issuedAt });
  return { certificate, privateKey: keys.privateKey };
}

const oldCa = await authority('haptic-agent-ca');
const newCa = await authority('haptic-agent-ca');
const unrelatedCa = await authority('haptic-agent-ca');

async function leaf(
  issuer: CertificateAuthority,
  role: 'agent' | 'controller' = 'agent',
  issuedAt = now,
  validityDays = 365,
  dnsName = role === 'agent' ? 'agent.example.internal' : 'controller.example.internal',
): Promise<Certificate> {
  return (await issueLeaf({ role, dnsName, issuer, validityDays, now: issuedAt })).certificate;
}

const agent = await leaf(oldCa);
const controller = await leaf(oldCa, 'controller');
const agentUnderNewCa = await leaf(newCa);
const crossSigned = await crossSignCa({
  certificate: newCa.certificate,
  issuer: oldCa,
  notBefore: at(-backdateMs),
  notAfter: at(hourMs),
});
const expiredAgent = await leaf(oldCa, 'agent', at(-10 * dayMs), 5);
const futureAgent = await leaf(oldCa, 'agent', at(2 * dayMs));
const wildcardAgent = await leaf(oldCa, 'agent', now, 365, '*.example.internal');
// The same CA name and key, once expired and once renewed: the leaf is valid, its anchor is not.
const renewedCaKeys = (await issueCa({ commonName: 'renewed-ca', validityDays: 365, now })).keys;
const expiredCa = (
  await issueCa({
    commonName: 'renewed-ca',
    validityDays: 10,
    now: at(-30 * dayMs),
    keys: renewedCaKeys,
  })
).certificate;
const renewedCa = (
  await issueCa({ commonName: 'renewed-ca', validityDays: 365, now, keys: renewedCaKeys })
).certificate;
const agentUnderRenewedCa = await leaf({
  certificate: renewedCa,
  privateKey: renewedCaKeys.privateKey,
});
const agentIssuer: CertificateAuthority = await (async () => {
  const issued = await issueLeaf({
    role: 'agent',
    dnsName: 'issuer.example.internal',
    issuer: oldCa,
    validityDays: 30,
    now,
  });
  return { certificate: issued.certificate, privateKey: issued.keys.privateKey };
})();
const underLeaf = await leaf(agentIssuer);

interface Case {
  readonly name: string;
  readonly options: VerifyChainOptions;
  readonly path?: readonly Certificate[];
  readonly reason?: string;
  readonly message?: RegExp;
}

const server = { purpose: 'serverAuth', dnsName: 'agent.example.internal' } as const;

const cases: readonly Case[] = [
  {
    name: 'accepts an agent issued by the anchor, for serverAuth and its name',
    options: { chain: [agent], anchors: [oldCa.certificate], now, ...server },
    path: [agent, oldCa.certificate],
  },
  {
    name: 'accepts a controller issued by the anchor, for clientAuth and its name',
    options: {
      chain: [controller],
      anchors: [oldCa.certificate],
      now,
      purpose: 'clientAuth',
      dnsName: 'controller.example.internal',
    },
    path: [controller, oldCa.certificate],
  },
  {
    name: 'accepts a leaf under the new CA through the cross-signed CA with only the old CA as anchor',
    options: {
      chain: [agentUnderNewCa, crossSigned],
      anchors: [oldCa.certificate],
      now,
      ...server,
    },
    path: [agentUnderNewCa, crossSigned, oldCa.certificate],
  },
  {
    name: 'still accepts the cross-signed path at the last second of its window',
    options: {
      chain: [agentUnderNewCa, crossSigned],
      anchors: [oldCa.certificate],
      now: at(hourMs),
      ...server,
    },
    path: [agentUnderNewCa, crossSigned, oldCa.certificate],
  },
  {
    name: 'rejects the cross-signed path once its window has passed',
    options: {
      chain: [agentUnderNewCa, crossSigned],
      anchors: [oldCa.certificate],
      now: at(hourMs + 1000),
      ...server,
    },
    reason: chainFailureReasons.Expired,
  },
  {
    name: 'prefers the new CA as anchor over the cross-signed intermediate',
    options: {
      chain: [agentUnderNewCa, crossSigned],
      anchors: [newCa.certificate],
      now: at(2 * hourMs),
      ...server,
    },
    path: [agentUnderNewCa, newCa.certificate],
  },
  {
    name: 'accepts the old identity while the old CA is still a second anchor',
    options: { chain: [agent], anchors: [newCa.certificate, oldCa.certificate], now, ...server },
    path: [agent, oldCa.certificate],
  },
  {
    name: 'rejects a leaf under the new CA without the cross-signed CA when only the old CA is trusted',
    options: { chain: [agentUnderNewCa], anchors: [oldCa.certificate], now, ...server },
    reason: chainFailureReasons.UnknownAuthority,
  },
  {
    name: 'rejects a leaf from an unrelated CA with the same name',
    options: { chain: [agent], anchors: [unrelatedCa.certificate], now, ...server },
    reason: chainFailureReasons.UnknownAuthority,
  },
  {
    name: 'rejects an empty chain',
    options: { chain: [], anchors: [oldCa.certificate], now },
    reason: chainFailureReasons.Empty,
  },
  {
    name: 'rejects an expired leaf',
    options: { chain: [expiredAgent], anchors: [oldCa.certificate], now, ...server },
    reason: chainFailureReasons.Expired,
  },
  {
    name: 'rejects a leaf that is not yet valid',
    options: { chain: [futureAgent], anchors: [oldCa.certificate], now, ...server },
    reason: chainFailureReasons.NotYetValid,
  },
  {
    name: 'rejects a leaf whose anchor has expired',
    options: { chain: [agentUnderRenewedCa], anchors: [expiredCa], now },
    reason: chainFailureReasons.Expired,
    message: /trusted CA CN=renewed-ca expired/,
  },
  {
    name: 'accepts the same leaf under the renewed anchor with the same key',
    options: { chain: [agentUnderRenewedCa], anchors: [expiredCa, renewedCa], now },
    path: [agentUnderRenewedCa, renewedCa],
  },
  {
    name: 'rejects a controller certificate used as a server',
    options: { chain: [controller], anchors: [oldCa.certificate], now, purpose: 'serverAuth' },
    reason: chainFailureReasons.WrongPurpose,
  },
  {
    name: 'rejects an agent certificate used as a client',
    options: { chain: [agent], anchors: [oldCa.certificate], now, purpose: 'clientAuth' },
    reason: chainFailureReasons.WrongPurpose,
  },
  {
    name: 'rejects a CA certificate presented as a leaf for a purpose',
    options: {
      chain: [oldCa.certificate],
      anchors: [oldCa.certificate],
      now,
      purpose: 'serverAuth',
    },
    reason: chainFailureReasons.WrongPurpose,
  },
  {
    name: 'rejects a leaf whose DNS name differs',
    options: {
      chain: [agent],
      anchors: [oldCa.certificate],
      now,
      dnsName: 'other.example.internal',
    },
    reason: chainFailureReasons.NameMismatch,
  },
  {
    name: 'matches DNS names without regard to case',
    options: {
      chain: [agent],
      anchors: [oldCa.certificate],
      now,
      dnsName: 'Agent.Example.Internal',
    },
    path: [agent, oldCa.certificate],
  },
  {
    name: 'lets a wildcard cover exactly one leftmost label',
    options: {
      chain: [wildcardAgent],
      anchors: [oldCa.certificate],
      now,
      dnsName: 'agent.example.internal',
    },
    path: [wildcardAgent, oldCa.certificate],
  },
  {
    name: 'does not let a wildcard cover two labels',
    options: {
      chain: [wildcardAgent],
      anchors: [oldCa.certificate],
      now,
      dnsName: 'a.b.example.internal',
    },
    reason: chainFailureReasons.NameMismatch,
  },
  {
    name: 'rejects an issuer in the chain that is not a CA',
    options: { chain: [underLeaf, agentIssuer.certificate], anchors: [oldCa.certificate], now },
    reason: chainFailureReasons.NotCa,
  },
];

describe('verifyChain', () => {
  it.each(cases)('$name', ({ options, path, reason, message = /\.$/ }) => {
    const result = verifyChain(options);
    if (path !== undefined) {
      expect(result.ok ? result.path.map(certificateFingerprint) : result).toEqual(
        path.map(certificateFingerprint),
      );
    } else {
      expect(result).toMatchObject({ ok: false, reason });
      expect(result.ok ? '' : result.message).toMatch(message);
    }
  });

  it('gives up on a chain of CAs that all sign each other instead of trying every ordering', async () => {
    // Self-issued copies of one CA (one subject, one key): each signs the leaf and every other,
    // so the paths through them are the orderings of the chain, 12 × 11 × … × 6 up to the
    // longest path searched: minutes of CPU, where each costs one TLS handshake or review
    // (bench/certificate-reading.ts holds the time it takes under a second).
    const attacker = await authority('attacker-ca');
    const copies = await Promise.all(
      Array.from({ length: 12 }, () =>
        crossSignCa({
          certificate: attacker.certificate,
          issuer: attacker,
          notBefore: at(-backdateMs),
          notAfter: at(dayMs),
        }),
      ),
    );
    const options = {
      chain: [await leaf(attacker), ...copies],
      anchors: [oldCa.certificate],
      now,
      ...server,
    };
    expect(verifyChain(options)).toMatchObject({
      ok: false,
      reason: chainFailureReasons.UnknownAuthority,
    });
  });

  it('gives the same answer from its caches when asked again', () => {
    const options = {
      chain: [agentUnderNewCa, crossSigned],
      anchors: [oldCa.certificate],
      now,
      ...server,
    };
    expect(verifyChain(options)).toEqual(verifyChain(options));
    expect(verifyChain({ ...options, now: at(2 * hourMs) }).ok).toBe(false);
  });
});
