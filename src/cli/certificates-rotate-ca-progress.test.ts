import { describe, expect, it } from 'vitest';
import type { TlsReport } from '../agent-api/tls-report.ts';
import type { TlsStateEntryParse } from '../api/tls-state-entry.ts';
import { type ProgressInput, rotationLagging } from './certificates-rotate-ca-progress.ts';

const now = new Date('2030-03-01T12:00:00Z');
const newCa = '1'.repeat(64);
const oldCa = '2'.repeat(64);
const at = (seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();
const report = (serial: string, loadedAt: string, over: Partial<TlsReport> = {}): TlsReport => ({
  revision: '..r1',
  valid: true,
  reason: null,
  caFingerprints: [newCa],
  previousCaFingerprints: [],
  previousCaUntil: null,
  leaf: { serial, dnsNames: ['x'], notAfter: '2031-03-01T12:00:00.000Z' },
  loadedAt,
  ...over,
});
const entry = (
  role: 'agent' | 'controller',
  loaded: TlsReport,
  lastExchange: string | null,
): TlsStateEntryParse => ({
  ok: true,
  entry: { role, loaded, error: null, lastExchange, reportedBy: 'ctl', reportedAt: at(0) },
});
const trust = (leafSerial: string) => ({ secret: 's', cas: [newCa], previousCas: [], leafSerial });

function input(
  stage: ProgressInput['stage'],
  entries: [string, TlsStateEntryParse][],
): ProgressInput {
  return {
    stage,
    pods: [
      { name: 'ctl', role: 'controller' },
      { name: 'lb', role: 'agent' },
    ],
    expected: { controller: trust('c2'), agent: trust('a2') },
    entries: new Map(entries),
    now,
  };
}

describe('rotate-ca waits', () => {
  it('wait for every Pod to report what its Secret holds', () => {
    const lagging = rotationLagging(
      input('identities-loaded', [
        ['ctl', entry('controller', report('c2', at(-5)), at(-1))],
        ['lb', entry('agent', report('a1', at(-50), { caFingerprints: [newCa, oldCa] }), at(-1))],
      ]),
    );
    expect(lagging).toEqual([
      expect.stringMatching(
        /^agent lb: it has not loaded ca\.crt of Secret s yet; it has not loaded tls\.crt of Secret s yet$/,
      ),
    ]);
  });

  it('call the exchange verified only once it followed both new certificates', () => {
    const controller = entry('controller', report('c2', at(-10)), at(-1));
    const before = rotationLagging(
      input('exchange-verified', [
        ['ctl', controller],
        ['lb', entry('agent', report('a2', at(-5)), at(-7))],
      ]),
    );
    expect(before).toEqual([
      expect.stringContaining('agent lb: no authenticated exchange with ctl recorded since'),
    ]);
    const after = rotationLagging(
      input('exchange-verified', [
        ['ctl', controller],
        ['lb', entry('agent', report('a2', at(-5)), at(-2))],
      ]),
    );
    expect(after).toEqual([]);
  });

  it('do not count an exchange by a controller with its old certificate', () => {
    const lagging = rotationLagging(
      input('exchange-verified', [
        ['ctl', entry('controller', report('c1', at(-100)), at(-1))],
        ['lb', entry('agent', report('a2', at(-5)), at(-1))],
      ]),
    );
    expect(lagging).toEqual([
      expect.stringContaining('does not present the new controller certificate'),
    ]);
  });

  it('never call a stage done without Pods', () => {
    expect(rotationLagging({ ...input('complete', []), pods: [] })).toEqual([
      'no controller Pod is running',
      'no agent Pod is running',
    ]);
  });
});
