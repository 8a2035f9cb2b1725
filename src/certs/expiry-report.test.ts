import { describe, expect, it } from 'vitest';
import { encodeCertificateChain, issueCa } from '../pki/index.ts';
import { formatDuration, parseDuration } from './duration-text.ts';
import { allValid, formatEntry, secretExpiry } from './expiry-report.ts';

const t0 = new Date('2030-01-01T00:00:00Z');
const day = 86_400_000;
const ca = await issueCa({ commonName: 'haptic-agent-ca-1', validityDays: 40, now: t0 });
const pem = Buffer.from(encodeCertificateChain([ca.certificate])).toString('base64');
const data = { 'tls.crt': pem, 'ca.crt': pem };
const window = (days: number) => ({ now: new Date(t0.getTime() + days * day), withinMs: 30 * day });

describe('secretExpiry', () => {
  for (const [sentence, days, status] of [
    ['is ok while more than the window remains', 9, 'ok'],
    ['fails within the window', 11, 'expiring'],
    ['fails once expired', 41, 'expired'],
  ] as const) {
    it(sentence, () => {
      const entries = secretExpiry('identity', data, window(days));
      expect(entries.map((entry) => [entry.key, entry.status])).toEqual([
        ['tls.crt', status],
        ['ca.crt', status],
      ]);
      expect(allValid(entries)).toBe(status === 'ok');
    });
  }

  it('reports every CA of a bundle and anything unreadable', () => {
    const bundle = Buffer.from(encodeCertificateChain([ca.certificate, ca.certificate])).toString(
      'base64',
    );
    const entries = secretExpiry(
      'identity',
      { 'tls.crt': 'bm90IFBFTQ==', 'ca.crt': bundle },
      window(1),
    );
    expect(entries.map((entry) => [entry.key, entry.status])).toEqual([
      ['tls.crt', 'unreadable'],
      ['ca.crt', 'ok'],
      ['ca.crt[2]', 'ok'],
    ]);
    expect(secretExpiry('gone', undefined, window(1)).map((entry) => entry.problem)).toEqual([
      'Secret gone does not exist',
      'Secret gone does not exist',
    ]);
  });

  it('prints one line per certificate, status last', () => {
    const [entry] = secretExpiry('identity', data, window(11));
    if (entry === undefined) throw new Error('no entry');
    expect(formatEntry(entry, window(11), '30d')).toBe(
      'identity tls.crt: CN=haptic-agent-ca-1 expires 2030-02-10T00:00:00Z, in 29d 0h: expires within 30d',
    );
  });
});

describe('parseDuration', () => {
  for (const [text, ms] of [
    ['30d', 30 * day],
    ['720h', 30 * day],
    ['1d12h', 1.5 * day],
    ['90m', 5_400_000],
    ['2592000s', 30 * day],
    ['30', undefined],
    ['-1d', undefined],
    ['a month', undefined],
  ] as const) {
    it(`reads "${text}"`, () => {
      expect(parseDuration(text)).toBe(ms);
    });
  }

  it('formats days and hours, or minutes and seconds below an hour', () => {
    expect(formatDuration(29 * day + 3_600_000)).toBe('29d 1h');
    expect(formatDuration(-90_500)).toBe('1m 30s');
  });
});
