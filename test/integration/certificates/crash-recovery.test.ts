import { CoreV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { type SecretStore, renewCertificates } from '../../../src/certs/reconciler.ts';
import { errorCodes } from '../../../src/errors.ts';
import { makeApiClient } from '../../../src/kube/api-client.ts';
import { RequestCounter } from '../../../src/kube/request-counter.ts';
import { SecretClient } from '../../../src/kube/secrets.ts';
import { adminKubeConfig, createTestNamespace, kubectl } from '../../support/cluster.ts';
import { peersAuthenticate } from './peer-verification.ts';
import {
  type Snapshot,
  actions,
  after,
  fingerprint,
  generation,
  names,
  readSecrets,
  renew,
  t0,
  text,
  written,
} from './renewal-harness.ts';

const hourMs = 3_600_000;
const rotationAt = after(335);
const cleanupAt = new Date(rotationAt.getTime() + hourMs);

interface Phase {
  readonly name: string;
  /** Runs that bring a fresh namespace to the phase. */
  readonly before: readonly Date[];
  readonly now: Date;
  readonly writes: readonly string[];
  readonly generation: number;
}

const phases: readonly Phase[] = [
  {
    name: 'bootstrap',
    before: [],
    now: t0,
    writes: [names.issuer, names.server, names.client],
    generation: 1,
  },
  {
    name: 'CA rotation',
    before: [t0],
    now: rotationAt,
    writes: [names.issuer, names.server, names.client],
    generation: 2,
  },
  {
    name: 'clean-up after the overlap',
    before: [t0, rotationAt],
    now: cleanupAt,
    writes: [names.issuer, names.server, names.client],
    generation: 2,
  },
];

/** Every identity present is issued by the issuer's CA and trusts exactly it. */
function expectUnderIssuer(state: Snapshot): void {
  const ca = fingerprint(state.issuer, 'tls.crt');
  for (const identity of [state.server, state.client]) {
    expect(fingerprint(identity, 'ca.crt')).toBe(ca);
  }
}

describe('haptic certificates renew: a run killed after any write, then rerun', () => {
  for (const phase of phases) {
    for (const [index, killedAfter] of phase.writes.entries()) {
      const count = index + 1;
      it(`finishes the ${phase.name} in the same generation when killed after writing ${killedAfter}`, async () => {
        const ns = await createTestNamespace('certs-crash');
        for (const now of phase.before) expect((await renew(ns, { now })).exitCode).toBe(0);
        const before = await readSecrets(ns);

        const killed = await renew(ns, { now: phase.now, exitAfterWrites: count });
        expect(killed.signal).toBe('SIGKILL');
        expect(written(killed)).toEqual(
          phase.writes.slice(0, count).map((name) => `${ns}/${name}`),
        );
        const interrupted = await readSecrets(ns);
        // Whatever was left behind, peers that have both identities still authenticate.
        if (interrupted.server !== undefined && interrupted.client !== undefined) {
          expect(await peersAuthenticate(interrupted, phase.now)).toEqual({
            server: 'OK',
            client: 'OK',
          });
        }

        const rerun = await renew(ns, { now: phase.now });
        expect(rerun.stderr).toBe('');
        expect(rerun.exitCode).toBe(0);
        expect(actions(rerun)).not.toContain('bootstrap');
        expect(actions(rerun)).not.toContain('rotate-ca');
        const final = await readSecrets(ns);
        expect(generation(final)).toBe(phase.generation);
        // The CA stored by the interrupted run is the one the rerun finished with.
        expect(fingerprint(final.issuer, 'tls.crt')).toBe(
          fingerprint(interrupted.issuer, 'tls.crt'),
        );
        expectUnderIssuer(final);
        if (phase.name === 'CA rotation') {
          for (const identity of [final.server, final.client]) {
            expect(fingerprint(identity, 'previous-ca.crt')).toBe(
              fingerprint(before.issuer, 'tls.crt'),
            );
          }
        }
        expect(await peersAuthenticate(final, phase.now)).toEqual({ server: 'OK', client: 'OK' });
        expect(written(await renew(ns, { now: phase.now }))).toEqual([]);
      });
    }
  }

  it('finishes an interrupted rotation without previous trust when rerun after its deadline', async () => {
    const ns = await createTestNamespace('certs-crash-late');
    expect((await renew(ns, { now: t0 })).exitCode).toBe(0);
    const killed = await renew(ns, { now: rotationAt, exitAfterWrites: 1 });
    expect(killed.signal).toBe('SIGKILL');
    const stored = await readSecrets(ns);
    expect(generation(stored)).toBe(2);

    const late = new Date(rotationAt.getTime() + 2 * hourMs);
    const rerun = await renew(ns, { now: late });
    expect(rerun.exitCode).toBe(0);
    expect(actions(rerun)).toEqual(['reissue-identities', 'cleanup-previous-ca', 'none']);
    const final = await readSecrets(ns);
    expect(generation(final)).toBe(2);
    expect(fingerprint(final.issuer, 'tls.crt')).toBe(fingerprint(stored.issuer, 'tls.crt'));
    expect(text(final.issuer, 'previous-ca.crt')).toBeUndefined();
    for (const identity of [final.server, final.client]) {
      expect(Object.keys(identity?.data ?? {}).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    }
    expectUnderIssuer(final);
    expect(await peersAuthenticate(final, late)).toEqual({ server: 'OK', client: 'OK' });
  });
});

describe('haptic certificates renew: concurrent runs', () => {
  for (const [label, before, now, expected] of [
    ['bootstrap', [], t0, 1],
    ['CA rotation', [t0], rotationAt, 2],
  ] as const) {
    it(`lets concurrent runs of a ${label} converge on one CA generation`, async () => {
      const ns = await createTestNamespace('certs-race');
      for (const at of before) expect((await renew(ns, { now: at })).exitCode).toBe(0);
      const runs = await Promise.all([1, 2, 3].map(() => renew(ns, { now })));
      for (const run of runs) {
        if (run.exitCode === 0) continue;
        expect(run.exitCode).toBe(1);
        expect(run.stderr.trim().split('\n')).toHaveLength(1);
        expect(run.stderr).toMatch(
          /^haptic: Secret \S+ (changed after it was read|was created by another writer).*Rerun it: it resumes from the stored state\.$/m,
        );
      }
      const rerun = await renew(ns, { now });
      expect(rerun.exitCode).toBe(0);
      const final = await readSecrets(ns);
      expect(generation(final)).toBe(expected);
      expectUnderIssuer(final);
      expect(await peersAuthenticate(final, now)).toEqual({ server: 'OK', client: 'OK' });
      expect(written(await renew(ns, { now }))).toEqual([]);
    });
  }

  it('ends a run whose Secret changed between its read and its write, and a rerun converges', async () => {
    const ns = await createTestNamespace('certs-conflict');
    expect((await renew(ns, { now: t0 })).exitCode).toBe(0);
    const core = makeApiClient(adminKubeConfig(), CoreV1Api, {
      counter: new RequestCounter(),
      userAgent: 'haptic-test',
    });
    const secrets = new SecretClient(core, ns);
    // Another writer touches each Secret right before this run writes it.
    const meddled: SecretStore = {
      read: (name) => secrets.read(name),
      create: (body) => secrets.create(body),
      replace: async (body) => {
        const name = body.metadata?.name ?? '';
        await kubectl(['annotate', 'secret', name, '-n', ns, 'example.org/touched=yes']);
        return secrets.replace(body);
      },
    };
    const options = {
      secrets: { namespace: ns, ...names },
      names: { server: 'haptic-agent', client: 'haptic-controller' },
      now: rotationAt,
    };
    const silent = pino({ level: 'silent' });
    await expect(renewCertificates(meddled, options, silent)).rejects.toMatchObject({
      code: errorCodes.KUBE_CONFLICT,
      message: expect.stringMatching(
        new RegExp(
          `^Secret ${ns}/${names.issuer} changed after it was read at resourceVersion \\d+ \\(HTTP 409: .*\\)\\. ` +
            'Another renewal run or a user wrote it concurrently; this run stopped after 0 write\\(s\\)\\. ' +
            'Rerun it: it resumes from the stored state\\.$',
        ),
      ) as unknown,
    });
    const untouched = await readSecrets(ns);
    expect(generation(untouched)).toBe(1);

    const rerun = await renew(ns, { now: rotationAt });
    expect(rerun.exitCode).toBe(0);
    const final = await readSecrets(ns);
    expect(generation(final)).toBe(2);
    // The other writer's annotation survives the replacement.
    expect(final.issuer?.metadata?.annotations).toEqual({ 'example.org/touched': 'yes' });
    expectUnderIssuer(final);
  });
});
