import { describe, expect, it } from 'vitest';
import {
  type CertificateAuthority,
  type CryptoKeyPair,
  type Certificate,
  backdateMs,
  crossSignCa,
  issueCa,
  issueLeaf,
  sha256Fingerprint,
} from '../pki/index.ts';
import type { TlsStateEntryParse } from '../api/tls-state-entry.ts';
import { certificateSerial } from '../tls/loaded-report.ts';
import { statusRows } from './status-rows.ts';
import { type ReplicaConvergence, replicaConvergence } from './replica-convergence.ts';
import { renewalReasons } from './reasons.ts';
import type {
  CaRotation,
  IdentityMaterial,
  IdentityState,
  IssuerMaterial,
} from '../secrets/material.ts';
import type { RenewalInput } from './renewal-input.ts';
import { type RenewalDecision, decideRenewal, trustOverlapMs } from './renewal-policy.ts';

const second = 1000;
const hour = 3_600_000;
const day = 24 * hour;
const t0 = new Date('2030-01-01T00:00:00Z');
const at = (offset: number): Date => new Date(t0.getTime() + offset);
const names = { server: 'agent.example.internal', client: 'controller.example.internal' } as const;
const secretNames = {
  issuer: 'haptic/haptic-agent-issuer',
  server: 'haptic/haptic-agent-identity',
  client: 'haptic/haptic-controller-identity',
} as const;

async function ca(
  issuedAt: Date,
  days: number,
  keys?: CryptoKeyPair,
): Promise<CertificateAuthority> {
  const issued = await issueCa({
    commonName: 'haptic-agent-ca',
    validityDays: days,
    now: issuedAt,
    ...(keys && { keys }),
  });
  return { certificate: issued.certificate, privateKey: issued.keys.privateKey };
}

interface LeafOptions {
  readonly issuedAt?: Date;
  readonly days?: number;
  readonly role?: 'agent' | 'controller';
  readonly dnsName?: string;
}

async function identity(
  issuer: CertificateAuthority,
  options: LeafOptions = {},
): Promise<IdentityMaterial> {
  const role = options.role ?? 'agent';
  const leaf = await issueLeaf({
    role,
    dnsName: options.dnsName ?? (role === 'agent' ? names.server : names.client),
    issuer,
    validityDays: options.days ?? 365,
    now: options.issuedAt ?? t0,
  });
  return {
    chain: [leaf.certificate],
    privateKey: leaf.keys.privateKey,
    trust: [issuer.certificate],
  };
}

/** A CA with both identities, all issued at `issuedAt`. */
async function world(issuedAt: Date, caDays: number, leafDays = caDays) {
  const authority = await ca(issuedAt, caDays);
  return {
    authority,
    server: await identity(authority, { issuedAt, days: leafDays }),
    client: await identity(authority, { issuedAt, days: leafDays, role: 'controller' }),
  };
}
type World = Awaited<ReturnType<typeof world>>;

const present = (material: IdentityMaterial): IdentityState => ({ state: 'present', material });

function issuerOf(
  authority: CertificateAuthority,
  generation = 1,
  rotation?: CaRotation,
): IssuerMaterial {
  const base = { certificate: authority.certificate, privateKey: authority.privateKey, generation };
  return rotation === undefined ? base : { ...base, rotation };
}

function input(
  w: World,
  overrides: {
    issuer?: RenewalInput['issuer'];
    server?: IdentityState;
    client?: IdentityState;
    validityDays?: number;
  } = {},
): RenewalInput {
  return {
    issuer: overrides.issuer ?? { state: 'present', material: issuerOf(w.authority) },
    identities: {
      server: overrides.server ?? present(w.server),
      client: overrides.client ?? present(w.client),
    },
    names,
    secretNames,
    ...(overrides.validityDays === undefined ? {} : { validityDays: overrides.validityDays }),
  };
}

const year = await world(t0, 365);
const yearEnd = year.authority.certificate.notAfter.getTime();
const longCa = await world(t0, 3650, 60);
const sixtyDayEnd = longCa.server.chain[0].notAfter.getTime();
const sixtyDayLifetime = sixtyDayEnd - longCa.server.chain[0].notBefore.getTime();
const eightyNine = await world(t0, 3650, 89);
const eightyNineEnd = eightyNine.server.chain[0].notAfter.getTime();

// A CA re-signed for a shorter time with the same key, and an identity issued under the longer one.
const shortCaKeys = (await issueCa({ commonName: 'k', validityDays: 1, now: t0 })).keys;
const shortCa = await ca(t0, 365, shortCaKeys);
const outlivingServer = await identity(await ca(t0, 730, shortCaKeys), { days: 500 });

const unrelated = await world(t0, 365);
const expiredServer = await identity(longCa.authority, { issuedAt: at(-100 * day), days: 30 });
const futureServer = await identity(longCa.authority, { issuedAt: at(2 * day) });
const controllerAsServer = await identity(year.authority, {
  role: 'controller',
  dnsName: names.server,
});
const notCa = await identity(year.authority);

// A rotation from `year` (generation 1) to `next` (generation 2) at t0 + 340 days.
const rotatedAt = at(340 * day);
const next = await ca(rotatedAt, 365);
const crossSignedCa = await crossSignCa({
  certificate: next.certificate,
  issuer: year.authority,
  notBefore: new Date(rotatedAt.getTime() - backdateMs),
  notAfter: new Date(rotatedAt.getTime() + trustOverlapMs),
});
const rotation: CaRotation = {
  previousCa: year.authority.certificate,
  crossSignedCa,
  until: new Date(rotatedAt.getTime() + trustOverlapMs),
};
const rotatingIssuer = { state: 'present', material: issuerOf(next, 2, rotation) } as const;
const settledIssuer = { state: 'present', material: issuerOf(next, 2) } as const;
async function rotated(
  role: 'agent' | 'controller',
  withOverlap: boolean,
): Promise<IdentityMaterial> {
  const plain = await identity(next, { role, issuedAt: rotatedAt });
  if (!withOverlap) return plain;
  return {
    ...plain,
    chain: [plain.chain[0], crossSignedCa],
    previousTrust: { certificates: [year.authority.certificate], until: rotation.until },
  };
}
const rotatedServer = await rotated('agent', true);
const rotatedClient = await rotated('controller', true);
const bareRotatedServer = await rotated('agent', false);
const bareRotatedClient = await rotated('controller', false);
const badRotation: CaRotation = { ...rotation, crossSignedCa: next.certificate };

// `year` as the current CA in the middle of an overlap from `unrelated`, at a time it is due itself.
const dueAt = new Date(yearEnd - 20 * day);
const dueOverlap: CaRotation = {
  previousCa: unrelated.authority.certificate,
  crossSignedCa: await crossSignCa({
    certificate: year.authority.certificate,
    issuer: unrelated.authority,
    notBefore: dueAt,
    notAfter: new Date(dueAt.getTime() + hour),
  }),
  until: new Date(dueAt.getTime() + hour),
};
const withDueOverlap = (material: IdentityMaterial): IdentityMaterial => ({
  ...material,
  chain: [material.chain[0], dueOverlap.crossSignedCa],
  previousTrust: { certificates: [dueOverlap.previousCa], until: dueOverlap.until },
});

interface Case {
  readonly name: string;
  readonly input: RenewalInput;
  readonly now: Date;
  /** Fields the decision must have; a field given as undefined must be absent. */
  readonly expected: { readonly [K in keyof RenewalDecision]?: RenewalDecision[K] | undefined };
}

const both = ['server', 'client'] as const;

const thresholds: readonly Case[] = [
  {
    name: 'does nothing 31 days before expiry of a 365-day certificate',
    input: input(year),
    now: new Date(yearEnd - 31 * day),
    expected: { action: 'none', reason: renewalReasons.UpToDate, identities: [], violations: [] },
  },
  {
    name: 'does nothing one second before 30 days remain of a 365-day CA',
    input: input(year),
    now: new Date(yearEnd - 30 * day - second),
    expected: { action: 'none', nextRenewal: new Date(yearEnd - 30 * day) },
  },
  {
    name: 'rotates the CA, its key and both identities when 30 days remain of a 365-day CA',
    input: input(year),
    now: new Date(yearEnd - 30 * day),
    expected: {
      action: 'rotate-ca',
      reason: renewalReasons.CaRenewalDue,
      identities: both,
      generation: 2,
      overlapUntil: new Date(yearEnd - 30 * day + hour),
    },
  },
  {
    name: 'rotates an expired CA without an overlap, since nothing trusts it any more',
    input: input(year),
    now: new Date(yearEnd + second),
    expected: { action: 'rotate-ca', reason: renewalReasons.CaExpired, overlapUntil: undefined },
  },
  {
    name: 'renews when one third of a 60-day lifetime remains',
    input: input(longCa),
    now: new Date(sixtyDayEnd - sixtyDayLifetime / 3),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityRenewalDue,
      identities: both,
      generation: 1,
    },
  },
  {
    name: 'does nothing one second before one third of a 60-day lifetime remains',
    input: input(longCa),
    now: new Date(sixtyDayEnd - sixtyDayLifetime / 3 - second),
    expected: { action: 'none' },
  },
  {
    name: 'does not apply the 30-day rule to an 89-day lifetime',
    input: input(eightyNine),
    now: new Date(eightyNineEnd - 30 * day),
    expected: { action: 'none' },
  },
  {
    name: 'keeps a 365-day identity when certValidityDays changes to 30, and issues the next with 30',
    input: input(year, { validityDays: 30 }),
    now: new Date(yearEnd - 100 * day),
    expected: { action: 'none', validityDays: 30 },
  },
  {
    name: 'issues with 365 days when no validity is configured',
    input: input(year, { server: { state: 'absent' } }),
    now: at(day),
    expected: { action: 'reissue-identities', validityDays: 365 },
  },
];

const identities: readonly Case[] = [
  {
    name: 'recreates a missing identity Secret under the stored generation',
    input: input(year, { server: { state: 'absent' } }),
    now: at(day),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityMissing,
      identities: ['server'],
      generation: 1,
    },
  },
  {
    name: 'reissues an unparsable identity',
    input: input(year, {
      client: {
        state: 'unparsable',
        problem: {
          key: 'tls.crt',
          reason: 'NotBase64',
          message: 'tls.crt of Secret x is not valid base64.',
        },
      },
    }),
    now: at(day),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityUnparsable,
      identities: ['client'],
    },
  },
  {
    name: 'reissues an identity whose key belongs to another certificate',
    input: input(year, { server: present({ ...year.server, privateKey: year.client.privateKey }) }),
    now: at(day),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityKeyMismatch,
      identities: ['server'],
    },
  },
  {
    name: 'reissues an expired identity',
    input: input(longCa, { server: present(expiredServer) }),
    now: t0,
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityExpired,
      identities: ['server'],
    },
  },
  {
    name: 'reissues an identity that is not valid yet',
    input: input(longCa, { server: present(futureServer) }),
    now: t0,
    expected: { action: 'reissue-identities', reason: renewalReasons.IdentityNotYetValid },
  },
  {
    name: 'reissues an identity from an unrelated CA',
    input: input(year, {
      server: present({ ...unrelated.server, trust: [year.authority.certificate] }),
    }),
    now: at(day),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityIssuerMismatch,
      identities: ['server'],
    },
  },
  {
    name: 'reissues an identity whose DNS SAN is not the configured name',
    input: { ...input(year), names: { ...names, client: 'other.example.internal' } },
    now: at(day),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityNameMismatch,
      identities: ['client'],
    },
  },
  {
    name: 'reissues a server identity that carries clientAuth',
    input: input(year, { server: present(controllerAsServer) }),
    now: at(day),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityUsageMismatch,
      identities: ['server'],
    },
  },
  {
    name: 'reissues an identity whose ca.crt differs from the stored CA',
    input: input(year, {
      client: present({ ...year.client, trust: [unrelated.authority.certificate] }),
    }),
    now: at(day),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityTrustMismatch,
      identities: ['client'],
    },
  },
  {
    name: 'reissues both identities at once and lists both violations',
    input: input(year, { server: { state: 'absent' }, client: present(expiredServer) }),
    now: at(day),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityMissing,
      identities: both,
    },
  },
  {
    name: 'rotates the CA when an identity would outlive it',
    input: input({ authority: shortCa, server: outlivingServer, client: year.client }),
    now: at(day),
    expected: { action: 'rotate-ca', reason: renewalReasons.CaOutlivedByIdentity, generation: 2 },
  },
];

const issuer: readonly Case[] = [
  {
    name: 'bootstraps when neither issuer nor identities exist',
    input: input(year, {
      issuer: { state: 'absent' },
      server: { state: 'absent' },
      client: { state: 'absent' },
    }),
    now: t0,
    expected: {
      action: 'bootstrap',
      reason: renewalReasons.NothingIssued,
      identities: both,
      generation: 1,
    },
  },
  {
    name: 'refuses when the issuer is missing but identities exist',
    input: input(year, { issuer: { state: 'absent' }, client: { state: 'absent' } }),
    now: at(day),
    expected: {
      action: 'refuse',
      reason: renewalReasons.IssuerMissing,
      identities: [],
      generation: undefined,
    },
  },
  {
    name: 'refuses when the issuer is missing and an identity Secret exists unreadable',
    input: input(year, {
      issuer: { state: 'absent' },
      server: { state: 'absent' },
      client: {
        state: 'unparsable',
        problem: { key: 'tls.crt', reason: 'CertificateInvalid', message: 'x.' },
      },
    }),
    now: at(day),
    expected: { action: 'refuse', reason: renewalReasons.IssuerMissing },
  },
  {
    name: 'refuses when the issuer is corrupt, even without identities',
    input: input(year, {
      issuer: {
        state: 'unparsable',
        problem: {
          key: 'tls.key',
          reason: 'PrivateKeyInvalid',
          message: 'tls.key of Secret haptic/haptic-agent-issuer is unusable.',
        },
      },
      server: { state: 'absent' },
      client: { state: 'absent' },
    }),
    now: at(day),
    expected: { action: 'refuse', reason: renewalReasons.IssuerUnparsable },
  },
  {
    name: 'refuses when the issuer key does not belong to its CA',
    input: input(year, {
      issuer: {
        state: 'present',
        material: { ...issuerOf(year.authority), privateKey: unrelated.authority.privateKey },
      },
    }),
    now: at(day),
    expected: { action: 'refuse', reason: renewalReasons.IssuerKeyMismatch },
  },
  {
    name: 'refuses when the issuer certificate is not a CA',
    input: input(year, {
      issuer: {
        state: 'present',
        material: { certificate: notCa.chain[0], privateKey: notCa.privateKey, generation: 1 },
      },
    }),
    now: at(day),
    expected: { action: 'refuse', reason: renewalReasons.IssuerNotCa },
  },
  {
    name: 'refuses when the issuer CA is not valid yet instead of reissuing forever',
    input: input(year),
    now: at(-hour),
    expected: { action: 'refuse', reason: renewalReasons.IssuerNotYetValid },
  },
  {
    name: 'refuses a validity of zero days',
    input: input(year, { validityDays: 0 }),
    now: at(day),
    expected: { action: 'refuse', reason: renewalReasons.ValidityInvalid },
  },
  {
    name: 'refuses a rotation state whose cross-signature is not from the previous CA',
    input: input(year, { issuer: { state: 'present', material: issuerOf(next, 2, badRotation) } }),
    now: rotatedAt,
    expected: { action: 'refuse', reason: renewalReasons.IssuerRotationInvalid },
  },
];

const rotations: readonly Case[] = [
  {
    name: 'does nothing during the overlap once both identities carry it, and wakes at its end',
    input: input(year, {
      issuer: rotatingIssuer,
      server: present(rotatedServer),
      client: present(rotatedClient),
    }),
    now: new Date(rotatedAt.getTime() + 30 * 60_000),
    expected: { action: 'none', generation: 2, nextRenewal: rotation.until },
  },
  {
    name: 'resumes an interrupted rotation under the stored generation with the open overlap',
    input: input(year, { issuer: rotatingIssuer, server: present(rotatedServer) }),
    now: new Date(rotatedAt.getTime() + 10 * 60_000),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityIssuerMismatch,
      identities: ['client'],
      generation: 2,
      overlapUntil: rotation.until,
    },
  },
  {
    name: 'restores the overlap to an identity that lost its previous trust',
    input: input(year, {
      issuer: rotatingIssuer,
      server: present(bareRotatedServer),
      client: present(rotatedClient),
    }),
    now: new Date(rotatedAt.getTime() + 10 * 60_000),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityOverlapMismatch,
      identities: ['server'],
    },
  },
  {
    name: 'does not rotate again while an overlap is open, even when the CA is due',
    input: input(year, {
      issuer: { state: 'present', material: issuerOf(year.authority, 1, dueOverlap) },
      server: present(withDueOverlap(year.server)),
      client: present(withDueOverlap(year.client)),
    }),
    now: new Date(dueAt.getTime() + 10 * 60_000),
    expected: { action: 'reissue-identities', reason: renewalReasons.IdentityRenewalDue },
  },
  {
    name: 'cleans up the previous CA once the overlap has ended',
    input: input(year, {
      issuer: rotatingIssuer,
      server: present(rotatedServer),
      client: present(rotatedClient),
    }),
    now: rotation.until,
    expected: {
      action: 'cleanup-previous-ca',
      reason: renewalReasons.PreviousCaExpired,
      identities: both,
      generation: 2,
    },
  },
  {
    name: 'reissues identities left under the old CA after the overlap, without an overlap',
    input: input(year, { issuer: rotatingIssuer }),
    now: new Date(rotation.until.getTime() + hour),
    expected: {
      action: 'reissue-identities',
      reason: renewalReasons.IdentityIssuerMismatch,
      identities: both,
      overlapUntil: undefined,
    },
  },
  {
    name: 'cleans up previous trust an identity carries without a rotation',
    input: input(year, {
      issuer: settledIssuer,
      server: present(bareRotatedServer),
      client: present(rotatedClient),
    }),
    now: new Date(rotatedAt.getTime() + day),
    expected: {
      action: 'cleanup-previous-ca',
      reason: renewalReasons.IdentityPreviousTrustStale,
      identities: ['client'],
    },
  },
  {
    name: 'does nothing after the clean-up',
    input: input(year, {
      issuer: settledIssuer,
      server: present(bareRotatedServer),
      client: present(bareRotatedClient),
    }),
    now: new Date(rotatedAt.getTime() + day),
    expected: { action: 'none', generation: 2 },
  },
];

// What the replicas report during the rotation from `year` to `next`, judged as the Job does.
const fp = sha256Fingerprint;
const pods = [
  { name: 'haptic-controller-a', role: 'controller' },
  { name: 'haptic-haproxy-a', role: 'agent' },
  { name: 'haptic-haproxy-b', role: 'agent' },
] as const;
const expectation = {
  expected: {
    agent: {
      secret: secretNames.server,
      cas: [fp(next.certificate)],
      previousCas: [fp(year.authority.certificate)],
      leafSerial: certificateSerial(rotatedServer.chain[0]),
    },
    controller: {
      secret: secretNames.client,
      cas: [fp(next.certificate)],
      previousCas: [fp(year.authority.certificate)],
      leafSerial: certificateSerial(rotatedClient.chain[0]),
    },
  },
  issuerCa: fp(next.certificate),
} as const;

/** A recorded entry of a Pod that loaded `leaf` trusting `ca` (and `previous` until the overlap's end). */
function loaded(
  role: 'controller' | 'agent',
  leaf: Certificate,
  ca: Certificate,
  previous?: Certificate,
): TlsStateEntryParse {
  return {
    ok: true,
    entry: {
      role,
      loaded: {
        revision: '..2030_12_07_00_10_00.1',
        valid: true,
        reason: null,
        caFingerprints: [fp(ca)],
        previousCaFingerprints: previous === undefined ? [] : [fp(previous)],
        previousCaUntil: previous === undefined ? null : rotation.until.toISOString(),
        leaf: {
          serial: certificateSerial(leaf),
          dnsNames: [],
          notAfter: leaf.notAfter.toISOString(),
        },
        loadedAt: rotatedAt.toISOString(),
      },
      error: null,
      lastExchange: rotatedAt.toISOString(),
      reportedBy: 'haptic-controller-a',
      reportedAt: rotatedAt.toISOString(),
    },
  };
}

const onNewIdentity = {
  'haptic-controller-a': loaded(
    'controller',
    rotatedClient.chain[0],
    next.certificate,
    year.authority.certificate,
  ),
  'haptic-haproxy-a': loaded(
    'agent',
    rotatedServer.chain[0],
    next.certificate,
    year.authority.certificate,
  ),
  'haptic-haproxy-b': loaded(
    'agent',
    rotatedServer.chain[0],
    next.certificate,
    year.authority.certificate,
  ),
};
const duringOverlap = new Date(rotatedAt.getTime() + 10 * 60_000);

/** As the renewal run judges the replicas: each as `haptic certificates status` judges its row. */
function judged(
  entries: Readonly<Record<string, TlsStateEntryParse>>,
  replicas: readonly { name: string; role: 'controller' | 'agent' }[] = pods,
): ReplicaConvergence {
  const rows = statusRows({
    pods: replicas,
    entries: new Map(Object.entries(entries)),
    ...expectation,
    now: duringOverlap,
    withinMs: 0,
  });
  return replicaConvergence(rows, [], expectation.expected);
}

const converged = judged(onNewIdentity);
// haptic-haproxy-b still serves the old identity under the old CA.
const oneLagging = judged({
  ...onNewIdentity,
  'haptic-haproxy-b': loaded('agent', year.server.chain[0], year.authority.certificate),
});
const noReports = judged({});
const noReplicas = judged({}, []);

function rotating(convergence: ReplicaConvergence): RenewalInput {
  return {
    ...input(year, {
      issuer: rotatingIssuer,
      server: present(rotatedServer),
      client: present(rotatedClient),
    }),
    convergence,
  };
}

const convergence: readonly Case[] = [
  {
    name: 'cleans up before the deadline once every replica reports the new CA and identities',
    input: rotating(converged),
    now: duringOverlap,
    expected: {
      action: 'cleanup-previous-ca',
      reason: renewalReasons.ReplicasConverged,
      identities: both,
      generation: 2,
    },
  },
  {
    name: 'keeps the previous CA before the deadline while one replica lags',
    input: rotating(oneLagging),
    now: duringOverlap,
    expected: {
      action: 'none',
      generation: 2,
      nextRenewal: rotation.until,
      awaitingConvergenceUntil: rotation.until,
    },
  },
  {
    name: 'cleans up at the deadline although one replica lags',
    input: rotating(oneLagging),
    now: rotation.until,
    expected: {
      action: 'cleanup-previous-ca',
      reason: renewalReasons.PreviousCaExpired,
      identities: both,
      awaitingConvergenceUntil: undefined,
    },
  },
  {
    name: 'keeps the previous CA before the deadline when no replica reported',
    input: rotating(noReports),
    now: duringOverlap,
    expected: { action: 'none', awaitingConvergenceUntil: rotation.until },
  },
  {
    name: 'cleans up at the deadline when no replica reported',
    input: rotating(noReports),
    now: rotation.until,
    expected: { action: 'cleanup-previous-ca', reason: renewalReasons.PreviousCaExpired },
  },
  {
    name: 'keeps the previous CA before the deadline when there is no replica at all',
    input: rotating(noReplicas),
    now: duringOverlap,
    expected: { action: 'none', awaitingConvergenceUntil: rotation.until },
  },
  {
    name: 'keeps the previous CA before the deadline when the reports were not read',
    input: input(year, {
      issuer: rotatingIssuer,
      server: present(rotatedServer),
      client: present(rotatedClient),
    }),
    now: duringOverlap,
    expected: { action: 'none', awaitingConvergenceUntil: rotation.until },
  },
  {
    name: 'completes an interrupted rotation before a converged clean-up',
    input: {
      ...input(year, { issuer: rotatingIssuer, server: present(rotatedServer) }),
      convergence: converged,
    },
    now: duringOverlap,
    expected: { action: 'reissue-identities', identities: ['client'] },
  },
  {
    name: 'ignores convergence outside an overlap',
    input: {
      ...input(year, {
        issuer: settledIssuer,
        server: present(bareRotatedServer),
        client: present(bareRotatedClient),
      }),
      convergence: converged,
    },
    now: duringOverlap,
    expected: { action: 'none', awaitingConvergenceUntil: undefined },
  },
];

describe('decideRenewal: convergence messages', () => {
  it('names the lagging replica and what it reports, and the deadline', () => {
    const decision = decideRenewal(rotating(oneLagging), duringOverlap);
    expect(decision.message).toContain(
      `The previous CA stays trusted until ${rotation.until.toISOString()} and is removed then at the latest`,
    );
    expect(decision.message).toContain(
      `Pod haptic-haproxy-b (agent): it has not loaded ca.crt of Secret ${secretNames.server} yet`,
    );
    expect(decision.message).toContain(
      `it reports CA ${fp(year.authority.certificate).slice(0, 12)} and certificate serial ${certificateSerial(year.server.chain[0])}.`,
    );
    expect(decision.message).not.toContain('haptic-haproxy-a');
  });

  it('says how many replicas converged when cleaning up early', () => {
    expect(decideRenewal(rotating(converged), duringOverlap).message).toContain(
      'Every current replica (3) reports the CA generation 2',
    );
  });

  it('says why a role without replicas blocks the early clean-up', () => {
    expect(decideRenewal(rotating(noReplicas), duringOverlap).message).toContain(
      `No current HAProxy replica mounts Secret ${secretNames.server}, so none can report it.`,
    );
  });
});

describe.each([
  ['convergence', convergence],
  ['renewal thresholds', thresholds],
  ['identity checks', identities],
  ['issuer checks', issuer],
  ['CA rotation', rotations],
] as const)('decideRenewal: %s', (_group, cases) => {
  it.each(cases)('$name', ({ input: given, now, expected }) => {
    const decision = decideRenewal(given, now);
    expect(decision).toMatchObject(
      Object.fromEntries(Object.entries(expected).filter(([, value]) => value !== undefined)),
    );
    for (const [key, value] of Object.entries(expected)) {
      if (value === undefined) expect(decision).not.toHaveProperty(key);
    }
    expect(decision.message).toMatch(/\.$/);
    expect(decision.violations[0]?.reason ?? renewalReasons.UpToDate).toBe(decision.reason);
  });
});

describe('decideRenewal messages', () => {
  it('tell the operator to restore the issuer backup when refusing', () => {
    const decision = decideRenewal(input(year, { issuer: { state: 'absent' } }), at(day));
    expect(decision.message).toContain('haptic/haptic-agent-issuer');
    expect(decision.message).toMatch(/restore the issuer Secret from its backup/i);
  });

  it('name the identity Secret and the reason it is re-issued', () => {
    const decision = decideRenewal(input(year, { server: present(expiredServer) }), at(day));
    expect(decision.violations).toMatchObject([
      { role: 'server', reason: renewalReasons.IdentityExpired },
    ]);
    expect(decision.message).toContain('haptic/haptic-agent-identity');
  });
});
