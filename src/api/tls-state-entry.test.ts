import { describe, expect, it } from 'vitest';
import { type TlsStateEntry, parseTlsStateEntry } from './tls-state-entry.ts';

/** What the API server stores for a JSON merge patch of `value`: every null key removed. */
function mergePatched(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(mergePatched);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, inner]) => inner !== null)
      .map(([key, inner]) => [key, mergePatched(inner)]),
  );
}

const entry: TlsStateEntry = {
  role: 'agent',
  loaded: {
    caFingerprints: ['1'.repeat(64)],
    previousCaFingerprints: [],
    previousCaUntil: null,
    leaf: { serial: 'ff01', dnsNames: ['haptic-agent'], notAfter: '2027-11-30T21:23:12.000Z' },
    revision: null,
    valid: true,
    reason: null,
    loadedAt: '2026-11-30T21:23:16.861Z',
  },
  error: null,
  lastExchange: null,
  reportedBy: 'haptic-controller-1',
  reportedAt: '2026-11-30T21:23:18.191Z',
};

describe('a recorded TLS state entry', () => {
  it('reads back as written through a merge patch, which stores nulls by removing the keys', () => {
    expect(parseTlsStateEntry(entry, 'status.tls.p')).toEqual({ ok: true, entry });
    expect(parseTlsStateEntry(mergePatched(entry), 'status.tls.p')).toEqual({ ok: true, entry });
  });

  it('names the field that is malformed', () => {
    const broken = { ...entry, loaded: { ...entry.loaded, reason: 7 } };
    expect(parseTlsStateEntry(broken, 'status.tls.p')).toMatchObject({
      ok: false,
      field: 'status.tls.p.loaded.reason',
    });
  });
});
