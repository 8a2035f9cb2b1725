/**
 * `haptic certificates status` output of the rows src/certs/status-rows.ts judges.
 */
import { describe, expect, it } from 'vitest';
import type { TlsReport } from '../agent-api/tls-report.ts';
import { statusRows } from '../certs/status-rows.ts';
import { formatStatusJson, formatStatusTable } from './certificates-status-format.ts';

const now = new Date('2030-03-01T12:00:00Z');
const newCa = '1'.repeat(64);
const oldCa = '2'.repeat(64);
const loaded: TlsReport = {
  revision: '..r1',
  valid: true,
  reason: null,
  caFingerprints: [newCa],
  previousCaFingerprints: [oldCa],
  previousCaUntil: '2030-03-01T13:00:00.000Z',
  leaf: { serial: 'aa', dnsNames: ['haptic-agent'], notAfter: '2031-03-01T12:00:00.000Z' },
  loadedAt: now.toISOString(),
};
const expected = {
  secret: 'haptic-agent-server-tls',
  cas: [newCa],
  previousCas: [],
  leafSerial: 'aa',
};

describe('certificates status output', () => {
  const rows = statusRows({
    pods: [
      { name: 'haproxy-b', role: 'agent' },
      { name: 'haproxy-a', role: 'agent' },
    ],
    expected: { agent: expected, controller: { ...expected, secret: 'haptic-agent-client-tls' } },
    issuerCa: newCa,
    entries: new Map([
      [
        'haproxy-a',
        {
          ok: true,
          entry: {
            role: 'agent',
            loaded,
            error: null,
            lastExchange: '2030-03-01T11:59:50.000Z',
            reportedBy: 'haptic-controller-a',
            reportedAt: now.toISOString(),
          },
        },
      ],
    ]),
    now,
    withinMs: 30 * 86_400_000,
  });

  it('prints one aligned table row per Pod with short fingerprints and reasons', () => {
    expect(formatStatusTable(rows, now).split('\n')).toEqual([
      'POD        ROLE   CA            SECRET  ISSUER  PREVIOUS CA                LEAF EXPIRES              LAST EXCHANGE  STATUS',
      'haproxy-a  agent  111111111111  yes     yes     222222222222 (0d 1h left)  2031-03-01T12:00:00.000Z  0m 10s ago     not converged: it still trusts a previous CA that Secret haptic-agent-server-tls no longer grants',
      'haproxy-b  agent  -             no      no      -                          -                         -              not converged: no TLS state reported (the leader has not recorded it)',
    ]);
  });

  it('prints JSON with the full rows', () => {
    const parsed = JSON.parse(
      formatStatusJson({
        namespace: 'haptic',
        release: 'haptic',
        within: '30d',
        converged: false,
        pods: rows,
      }),
    ) as { pods: { pod: string; loadedCas: string[] }[] };
    expect(parsed.pods.map((pod) => [pod.pod, pod.loadedCas])).toEqual([
      ['haproxy-a', [newCa]],
      ['haproxy-b', []],
    ]);
  });
});
