import { describe, expect, it } from 'vitest';
import { type TlsReport, parseTlsReport, tlsReportLimits } from './tls-report.ts';

const fp = 'a'.repeat(64);
const good: TlsReport = {
  revision: '..2030_03_01_12_00_00.1',
  valid: true,
  reason: null,
  caFingerprints: [fp],
  previousCaFingerprints: [],
  previousCaUntil: null,
  leaf: { serial: '0a1b', dnsNames: ['haptic-agent'], notAfter: '2031-03-01T12:00:00.000Z' },
  loadedAt: '2030-03-01T12:00:00.000Z',
};

describe('parsing a TLS report', () => {
  it('accepts a well-formed report unchanged', () => {
    expect(parseTlsReport(good, 'tls.loaded')).toEqual({ ok: true, report: good });
  });

  it.each([
    ['a missing report', undefined, 'tls.loaded'],
    ['a report that is a list', [], 'tls.loaded'],
    ['valid as a string', { ...good, valid: 'yes' }, 'tls.loaded.valid'],
    [
      'an upper-case fingerprint',
      { ...good, caFingerprints: ['A'.repeat(64)] },
      'tls.loaded.caFingerprints[0]',
    ],
    [
      'a colon-separated fingerprint',
      { ...good, previousCaFingerprints: ['AB:CD'] },
      'tls.loaded.previousCaFingerprints[0]',
    ],
    [
      'too many CAs',
      { ...good, caFingerprints: Array<string>(tlsReportLimits.certificates + 1).fill(fp) },
      'tls.loaded.caFingerprints',
    ],
    [
      'a deadline with an offset',
      { ...good, previousCaUntil: '2030-03-01T13:00:00+01:00' },
      'tls.loaded.previousCaUntil',
    ],
    [
      'a serial that is not hex',
      { ...good, leaf: { ...good.leaf, serial: 'xyz' } },
      'tls.loaded.leaf.serial',
    ],
    [
      'a huge serial',
      { ...good, leaf: { ...good.leaf, serial: 'a'.repeat(65) } },
      'tls.loaded.leaf.serial',
    ],
    [
      'a SAN list of numbers',
      { ...good, leaf: { ...good.leaf, dnsNames: [1] } },
      'tls.loaded.leaf.dnsNames[0]',
    ],
    ['a revision with a space', { ...good, revision: '..data x' }, 'tls.loaded.revision'],
    ['a reason with markup', { ...good, reason: '<b>' }, 'tls.loaded.reason'],
    ['no loadedAt', { ...good, loadedAt: undefined }, 'tls.loaded.loadedAt'],
  ])('refuses %s, naming the field', (_name, value, field) => {
    const parsed = parseTlsReport(value, 'tls.loaded');
    expect(parsed).toMatchObject({ ok: false, field });
    if (!parsed.ok)
      expect(parsed.message).toMatch(new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')} must be `));
  });
});
