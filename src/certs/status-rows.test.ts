import { describe, expect, it } from 'vitest';
import type { TlsReport } from '../agent-api/tls-report.ts';
import type { TlsStateEntryParse } from '../api/tls-state-entry.ts';
import { type StatusInput, statusRows } from './status-rows.ts';

const now = new Date('2030-03-01T12:00:00Z');
const day = 86_400_000;
const newCa = '1'.repeat(64);
const oldCa = '2'.repeat(64);
const report = (over: Partial<TlsReport> = {}): TlsReport => ({
  revision: '..r1',
  valid: true,
  reason: null,
  caFingerprints: [newCa],
  previousCaFingerprints: [],
  previousCaUntil: null,
  leaf: { serial: 'aa', dnsNames: ['haptic-agent'], notAfter: '2031-03-01T12:00:00.000Z' },
  loadedAt: now.toISOString(),
  ...over,
});
const entry = (loaded: TlsReport | null, over: object = {}): TlsStateEntryParse => ({
  ok: true,
  entry: {
    role: 'agent',
    loaded,
    error: null,
    lastExchange: '2030-03-01T11:59:50.000Z',
    reportedBy: 'haptic-controller-a',
    reportedAt: now.toISOString(),
    ...over,
  },
});
const expected = {
  secret: 'haptic-agent-server-tls',
  cas: [newCa],
  previousCas: [],
  leafSerial: 'aa',
};
const input = (
  entries: [string, TlsStateEntryParse][],
  over: Partial<StatusInput> = {},
): StatusInput => ({
  pods: [
    { name: 'haproxy-b', role: 'agent' },
    { name: 'haproxy-a', role: 'agent' },
  ],
  expected: { agent: expected, controller: { ...expected, secret: 'haptic-agent-client-tls' } },
  issuerCa: newCa,
  entries: new Map(entries),
  now,
  withinMs: 30 * day,
  ...over,
});
const problems = (value: StatusInput) => statusRows(value).map((row) => row.problems);

describe('certificates status rows', () => {
  it('calls every Pod converged when each reports the Secret and issuer CA and a long-lived leaf', () => {
    const rows = statusRows(
      input([
        ['haproxy-a', entry(report())],
        ['haproxy-b', entry(report())],
      ]),
    );
    expect(
      rows.map((row) => [row.pod, row.converged, row.matchesSecret, row.matchesIssuer]),
    ).toEqual([
      ['haproxy-a', true, true, true],
      ['haproxy-b', true, true, true],
    ]);
  });

  it('names a Pod without a report', () => {
    expect(problems(input([['haproxy-a', entry(report())]]))[1]).toEqual([
      'no TLS state reported (the leader has not recorded it)',
    ]);
  });

  it('names a Pod that still trusts only the old CA', () => {
    const lagging = entry(report({ caFingerprints: [oldCa] }));
    expect(
      problems(
        input([
          ['haproxy-a', lagging],
          ['haproxy-b', entry(report())],
        ]),
      )[0],
    ).toEqual([
      'it has not loaded ca.crt of Secret haptic-agent-server-tls yet',
      "it does not trust the issuer Secret's current CA yet",
    ]);
  });

  it('names a Pod that still trusts a previous CA the Secret revoked', () => {
    const stale = report({
      previousCaFingerprints: [oldCa],
      previousCaUntil: '2030-03-01T12:30:00.000Z',
    });
    const [row] = statusRows(
      input([
        ['haproxy-a', entry(stale)],
        ['haproxy-b', entry(report())],
      ]),
    );
    expect(row?.previousCaLeftMs).toBe(30 * 60_000);
    expect(row?.problems).toEqual([
      'it still trusts a previous CA that Secret haptic-agent-server-tls no longer grants',
    ]);
  });

  it('accepts previous trust while the Secret grants it', () => {
    const both = report({
      previousCaFingerprints: [oldCa],
      previousCaUntil: '2030-03-01T12:30:00.000Z',
    });
    const granted = { ...expected, previousCas: [oldCa] };
    const value = input(
      [
        ['haproxy-a', entry(both)],
        ['haproxy-b', entry(both)],
      ],
      {
        expected: { agent: granted, controller: granted },
      },
    );
    expect(statusRows(value).every((row) => row.converged)).toBe(true);
  });

  it('names an old identity, an expiry inside the window, a failed state request and a malformed entry', () => {
    const soon = report({
      leaf: { serial: 'bb', dnsNames: [], notAfter: '2030-03-20T12:00:00.000Z' },
    });
    const failed = entry(report(), { error: 'The last state request failed: timeout' });
    const malformed: TlsStateEntryParse = {
      ok: false,
      field: 'x.role',
      message: 'x.role must be controller or agent',
    };
    expect(
      problems(
        input([
          ['haproxy-a', entry(soon)],
          ['haproxy-b', failed],
        ]),
      ),
    ).toEqual([
      [
        'it has not loaded tls.crt of Secret haptic-agent-server-tls yet',
        'its certificate expires at 2030-03-20T12:00:00.000Z',
      ],
      ['The last state request failed: timeout'],
    ]);
    expect(
      problems(
        input([
          ['haproxy-a', malformed],
          ['haproxy-b', entry(report())],
        ]),
      )[0],
    ).toEqual(['its recorded TLS state is malformed: x.role must be controller or agent']);
  });

  it('leaves the issuer out when there is no issuer Secret', () => {
    const rows = statusRows(
      input(
        [
          ['haproxy-a', entry(report())],
          ['haproxy-b', entry(report())],
        ],
        { issuerCa: undefined },
      ),
    );
    expect(rows.map((row) => row.matchesIssuer)).toEqual([null, null]);
  });
});
