import { describe, expect, it } from 'vitest';
import type { TlsReport } from '../../agent-api/tls-report.ts';
import { ControllerMetrics } from './controller-metrics.ts';
import { TlsSeries } from './tls-series.ts';
import { TlsStateBook } from './tls-state-book.ts';
import type { TlsStateEntry } from '../../api/tls-state-entry.ts';

const oldCa = '1'.repeat(64);
const newCa = '2'.repeat(64);
const report = (over: Partial<TlsReport> = {}): TlsReport => ({
  revision: '..r1',
  valid: true,
  reason: null,
  caFingerprints: [oldCa],
  previousCaFingerprints: [],
  previousCaUntil: null,
  leaf: { serial: 'aa', dnsNames: ['haptic-agent'], notAfter: '2031-03-01T12:00:00.000Z' },
  loadedAt: '2030-03-01T12:00:00.000Z',
  ...over,
});

function setup() {
  const metrics = new ControllerMetrics();
  const writes: [string, TlsStateEntry | null][] = [];
  let clock = Date.parse('2030-03-01T12:00:00Z');
  const book = new TlsStateBook({
    pod: 'controller-a',
    series: new TlsSeries(metrics),
    sink: { put: (pod, entry) => writes.push([pod, entry]) },
    now: () => new Date(clock),
  });
  const series = async (name: string) =>
    (await metrics.registry.getSingleMetric(name)?.get())?.values.map((v) => ({
      ...v.labels,
      value: v.value,
    })) ?? [];
  return { book, writes, series, advance: (ms: number) => (clock += ms) };
}

describe('the TLS state book', () => {
  it('records agents and itself, with metrics, and writes only changes', async () => {
    const { book, writes, series } = setup();
    book.own(report());
    book.agentState('haproxy-a', { mode: 'mtls', loaded: report() });
    book.agentState('haproxy-a', { mode: 'mtls', loaded: report() });
    expect(writes.map(([pod, entry]) => [pod, entry?.role, entry?.lastExchange])).toEqual([
      ['controller-a', 'controller', null],
      ['haproxy-a', 'agent', null],
      ['haproxy-a', 'agent', '2030-03-01T12:00:00.000Z'],
      ['controller-a', 'controller', '2030-03-01T12:00:00.000Z'],
    ]);
    expect(await series('haptic_tls_certificate_not_after_timestamp_seconds')).toEqual([
      { role: 'controller', pod: 'controller-a', value: Date.parse('2031-03-01T12:00:00Z') / 1000 },
      { role: 'agent', pod: 'haproxy-a', value: Date.parse('2031-03-01T12:00:00Z') / 1000 },
    ]);
  });

  it('replaces the CA series when the CA changes and removes them when the Pod goes', async () => {
    const { book, series } = setup();
    book.agentState('haproxy-a', { mode: 'mtls', loaded: report() });
    book.agentState('haproxy-a', {
      mode: 'mtls',
      loaded: report({
        caFingerprints: [newCa],
        previousCaFingerprints: [oldCa],
        previousCaUntil: '2030-03-01T13:00:00.000Z',
      }),
    });
    expect(await series('haptic_tls_trusted_ca_info')).toEqual([
      { role: 'agent', pod: 'haproxy-a', fingerprint: newCa, kind: 'current', value: 1 },
      { role: 'agent', pod: 'haproxy-a', fingerprint: oldCa, kind: 'previous', value: 1 },
    ]);
    expect(await series('haptic_tls_previous_ca_until_timestamp_seconds')).toEqual([
      { role: 'agent', pod: 'haproxy-a', value: Date.parse('2030-03-01T13:00:00Z') / 1000 },
    ]);
    book.retainAgents(new Set());
    expect(await series('haptic_tls_trusted_ca_info')).toEqual([]);
    expect(await series('haptic_tls_certificate_not_after_timestamp_seconds')).toEqual([]);
  });

  it('records a malformed answer as an error naming the field', () => {
    const { book, writes } = setup();
    book.agentState('haproxy-a', {
      mode: 'mtls',
      loaded: { ...report(), caFingerprints: ['AB:CD'] },
    });
    expect(writes[0]?.[1]).toMatchObject({
      loaded: null,
      error: expect.stringContaining(
        'tls.loaded.caFingerprints[0] must be 64 lower-case hex digits',
      ) as unknown,
    });
  });

  it('keeps the last report of an unreachable agent, marked with why', () => {
    const { book, writes } = setup();
    book.agentState('haproxy-a', { mode: 'mtls', loaded: report() });
    book.agentFailed('haproxy-a', 'timed out');
    expect(writes.at(-1)?.[1]).toMatchObject({
      loaded: report(),
      error: 'The last state request failed: timed out',
    });
  });

  it('refreshes the last exchange at most once a minute', () => {
    const { book, writes, advance } = setup();
    book.agentState('haproxy-a', { mode: 'mtls', loaded: report() });
    const count = writes.length;
    advance(30_000);
    book.exchanged('haproxy-a');
    expect(writes.length).toBe(count);
    advance(31_000);
    book.exchanged('haproxy-a');
    expect(writes.at(-1)?.[1]?.lastExchange).toBe('2030-03-01T12:01:01.000Z');
  });
});
