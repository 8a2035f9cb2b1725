import { describe, expect, it } from 'vitest';
import { isSignedBy } from '../../../src/pki/index.ts';
import { createTestNamespace } from '../../support/cluster.ts';
import { opensslVerify, peersAuthenticate } from './peer-verification.ts';
import {
  actions,
  after,
  certificates,
  fingerprint,
  generation,
  names,
  readSecrets,
  renew,
  rfc3339,
  summary,
  t0,
  text,
  versions,
  written,
} from './renewal-harness.ts';

const hourMs = 3_600_000;

describe('haptic certificates renew: renewal thresholds', () => {
  it('renews the CA and both identities when 30 days of a 365-day lifetime remain, not a second earlier', async () => {
    const ns = await createTestNamespace('certs-365');
    expect((await renew(ns, { now: t0 })).exitCode).toBe(0);
    const issued = await readSecrets(ns);

    for (const now of [after(1), after(334), after(335, -1)]) {
      const run = await renew(ns, { now });
      expect(actions(run)).toEqual(['none']);
      expect(summary(run)?.requests).toEqual({ GET: 3 });
    }
    expect(versions(await readSecrets(ns))).toEqual(versions(issued));

    const due = await renew(ns, { now: after(335) });
    expect(due.exitCode).toBe(0);
    expect(actions(due)).toEqual(['rotate-ca', 'none']);
    expect(due.logs.find((line) => line.action === 'rotate-ca')?.reason).toBe('CaRenewalDue');
    // The Secrets, then the overlap's one look for replicas (no Deployment mounts them here).
    expect(summary(due)?.requests).toEqual({ GET: 4, PUT: 3 });
    const rotated = await readSecrets(ns);
    expect(generation(rotated)).toBe(2);
    for (const target of ['issuer', 'server', 'client'] as const) {
      expect(text(rotated[target], 'tls.key')).not.toBe(text(issued[target], 'tls.key'));
    }
  });

  it('renews with one third of the lifetime remaining when certValidityDays is below 90', async () => {
    const ns = await createTestNamespace('certs-60');
    expect((await renew(ns, { now: t0, validityDays: 60 })).exitCode).toBe(0);
    expect(actions(await renew(ns, { now: after(39), validityDays: 60 }))).toEqual(['none']);
    const due = await renew(ns, { now: after(40), validityDays: 60 });
    expect(actions(due)).toEqual(['rotate-ca', 'none']);
    const [ca] = certificates((await readSecrets(ns)).issuer, 'tls.crt');
    expect(ca?.notAfter.toISOString()).toBe(after(100).toISOString());
  });

  it('applies a changed validity to the next issuance only', async () => {
    const ns = await createTestNamespace('certs-validity');
    expect((await renew(ns, { now: t0 })).exitCode).toBe(0);
    const before = await readSecrets(ns);
    const changed = await renew(ns, { now: after(1), validityDays: 30 });
    expect(actions(changed)).toEqual(['none']);
    expect(versions(await readSecrets(ns))).toEqual(versions(before));

    const due = await renew(ns, { now: after(335), validityDays: 30 });
    expect(actions(due)).toEqual(['rotate-ca', 'none']);
    const state = await readSecrets(ns);
    for (const target of ['issuer', 'server', 'client'] as const) {
      const [certificate] = certificates(state[target], 'tls.crt');
      expect(certificate?.notAfter.toISOString()).toBe(after(365).toISOString());
    }
  });

  it('recovers identities and CA that have already expired, without previous trust', async () => {
    const ns = await createTestNamespace('certs-expired');
    expect((await renew(ns, { now: t0 })).exitCode).toBe(0);
    const late = after(400);
    const run = await renew(ns, { now: late });
    expect(run.exitCode).toBe(0);
    expect(run.logs.find((line) => line.action === 'rotate-ca')?.reason).toBe('CaExpired');
    const state = await readSecrets(ns);
    expect(generation(state)).toBe(2);
    expect(Object.keys(state.issuer?.data ?? {}).sort()).toEqual([
      'generation',
      'tls.crt',
      'tls.key',
    ]);
    expect(Object.keys(state.server?.data ?? {}).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    expect(await peersAuthenticate(state, after(400, 60))).toEqual({ server: 'OK', client: 'OK' });
  });
});

describe('haptic certificates renew: CA rotation', () => {
  it('rotates with a cross-signed CA and one hour of previous trust, then cleans up after the deadline', async () => {
    const ns = await createTestNamespace('certs-rotate');
    expect((await renew(ns, { now: t0 })).exitCode).toBe(0);
    const old = await readSecrets(ns);
    const [oldCa] = certificates(old.issuer, 'tls.crt');
    if (oldCa === undefined) throw new Error('no CA');

    const now = after(335, 17);
    const until = new Date(now.getTime() + hourMs);
    const rotation = await renew(ns, { now });
    expect(written(rotation)).toEqual([
      `${ns}/${names.issuer}`,
      `${ns}/${names.server}`,
      `${ns}/${names.client}`,
    ]);
    const state = await readSecrets(ns);
    const [newCa] = certificates(state.issuer, 'tls.crt');
    if (newCa === undefined) throw new Error('no CA');
    expect(generation(state)).toBe(2);
    expect(newCa.subject).toBe('CN=haptic-agent-ca-2');
    expect(text(state.issuer, 'previous-ca-until')).toBe(rfc3339(until));
    expect(fingerprint(state.issuer, 'previous-ca.crt')).toBe(fingerprint(old.issuer, 'tls.crt'));

    for (const identity of [state.server, state.client]) {
      const [leaf, cross, ...rest] = certificates(identity, 'tls.crt');
      expect(rest).toEqual([]);
      if (leaf === undefined || cross === undefined)
        throw new Error('tls.crt lacks the cross-signed CA');
      expect(isSignedBy(leaf, newCa)).toBe(true);
      expect(cross.subject).toBe(newCa.subject);
      expect(isSignedBy(cross, oldCa)).toBe(true);
      expect(cross.notAfter.toISOString()).toBe(until.toISOString());
      expect(fingerprint(identity, 'ca.crt')).toBe(fingerprint(state.issuer, 'tls.crt'));
      expect(fingerprint(identity, 'previous-ca.crt')).toBe(fingerprint(old.issuer, 'tls.crt'));
      expect(text(identity, 'previous-ca-until')).toBe(rfc3339(until));
    }

    // A peer that still trusts only the old CA accepts the new identities during the hour.
    const duringOverlap = new Date(until.getTime() - 60_000);
    for (const [role, purpose, hostname] of [
      ['server', 'sslserver', 'haptic-agent'],
      ['client', 'sslclient', 'haptic-controller'],
    ] as const) {
      const chain = certificates(state[role], 'tls.crt');
      const viaOld = { chain, anchors: [oldCa], purpose, hostname };
      expect((await opensslVerify({ ...viaOld, at: duringOverlap })).ok).toBe(true);
      expect((await opensslVerify({ ...viaOld, at: new Date(until.getTime() + 60_000) })).ok).toBe(
        false,
      );
      expect(
        (await opensslVerify({ chain, anchors: [newCa], purpose, hostname, at: duringOverlap })).ok,
      ).toBe(true);
    }
    // The old controller identity keeps authenticating against the rotated trust until the deadline.
    const oldClient = certificates(old.client, 'tls.crt');
    const againstRotated = {
      chain: oldClient,
      purpose: 'sslclient',
      hostname: 'haptic-controller',
    } as const;
    expect(
      (await opensslVerify({ ...againstRotated, anchors: [newCa, oldCa], at: duringOverlap })).ok,
    ).toBe(true);

    // Within the overlap nothing else happens (no replica reports the new identities here);
    // after it, the leftovers go: the issuer forgets the rotation first.
    expect(actions(await renew(ns, { now: duringOverlap }))).toEqual(['none']);
    const cleanup = await renew(ns, { now: until });
    expect(actions(cleanup)).toEqual(['cleanup-previous-ca', 'none']);
    expect(written(cleanup)).toEqual([
      `${ns}/${names.issuer}`,
      `${ns}/${names.server}`,
      `${ns}/${names.client}`,
    ]);
    const clean = await readSecrets(ns);
    expect(Object.keys(clean.issuer?.data ?? {}).sort()).toEqual([
      'generation',
      'tls.crt',
      'tls.key',
    ]);
    for (const role of ['server', 'client'] as const) {
      expect(Object.keys(clean[role]?.data ?? {}).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
      expect(certificates(clean[role], 'tls.crt')).toHaveLength(1);
      // Clean-up keeps the identity's key and leaf: no new certificate to project.
      expect(text(clean[role], 'tls.key')).toBe(text(state[role], 'tls.key'));
    }
    expect(generation(clean)).toBe(2);
    expect(await peersAuthenticate(clean, after(335, 7200))).toEqual({
      server: 'OK',
      client: 'OK',
    });
    expect(actions(await renew(ns, { now: after(336) }))).toEqual(['none']);
  });

  it('ends the overlap at the deadline even if no clean-up ever runs', async () => {
    const ns = await createTestNamespace('certs-deadline');
    expect((await renew(ns, { now: t0 })).exitCode).toBe(0);
    const old = await readSecrets(ns);
    const now = after(335);
    expect((await renew(ns, { now })).exitCode).toBe(0);
    const rotated = await readSecrets(ns);
    const deadline = now.getTime() + hourMs;
    // A controller whose projection still holds the old Secret: fine during the hour, cut off
    // both ways after it (the cross-signature and previous-ca.crt both end at the deadline).
    const lagging = { ...rotated, client: old.client };
    expect(await peersAuthenticate(lagging, new Date(deadline - 1000))).toEqual({
      server: 'OK',
      client: 'OK',
    });
    const past = await peersAuthenticate(lagging, new Date(deadline + 1000));
    expect(past.server).toMatch(/certificate has expired/);
    expect(past.client).toMatch(/unable to get local issuer certificate/);
    expect(await peersAuthenticate(rotated, new Date(deadline + 1000))).toEqual({
      server: 'OK',
      client: 'OK',
    });
  });
});
