import { describe, expect, it } from 'vitest';
import {
  parseCookiePath,
  parseCorsOrigins,
  parseCount,
  parseHashBy,
  parseHeaderNames,
  parseLoadBalance,
  parseMethods,
  parseName,
  parseSameSite,
  parseSeconds,
  parseToken,
} from './traffic-values.ts';

/** Whether a parsed value was refused. */
const refused = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && 'expected' in value;

describe('traffic annotation values', () => {
  it.each([
    ['*', ['*']],
    ['https://app.example.com', ['https://app.example.com']],
    [
      'https://A.example.com:8443, http://b.example.com',
      ['https://a.example.com:8443', 'http://b.example.com'],
    ],
  ])('reads the CORS origins %j', (text, origins) => {
    expect(parseCorsOrigins(text)).toEqual(origins);
  });

  it.each([
    'https://app.example.com/path',
    'javascript:alert(1)',
    'https://app.example.com"',
    'https://a.example.com, *',
    '',
    'https://$HOME.example.com',
  ])('refuses the CORS origins %j', (text) => {
    expect(refused(parseCorsOrigins(text))).toBe(true);
  });

  it('reads methods upper case and refuses anything but letters', () => {
    expect(parseMethods('get, put,POST')).toEqual(['GET', 'PUT', 'POST']);
    expect(refused(parseMethods('GET; rm'))).toBe(true);
    expect(refused(parseMethods('GET "x"'))).toBe(true);
  });

  it('reads header names as tokens, refusing quotes, spaces, $ and %', () => {
    expect(parseHeaderNames('Authorization, X-Trace')).toEqual(['Authorization', 'X-Trace']);
    for (const text of ['X-"a"', 'X a', '${HOME}', 'X-%[src]', 'X\\n']) {
      expect(refused(parseHeaderNames(text))).toBe(true);
    }
  });

  it('bounds seconds and counts', () => {
    expect(parseSeconds(100)('100')).toBe(100);
    expect(refused(parseSeconds(100)('101'))).toBe(true);
    expect(refused(parseSeconds(100)('-1'))).toBe(true);
    expect(parseCount(10)('10')).toBe(10);
    expect(refused(parseCount(10)('0'))).toBe(true);
    expect(refused(parseCount(10)('1.5'))).toBe(true);
  });

  it('reads cookie names, paths and SameSite strictly', () => {
    expect(parseName('route_v2')).toBe('route_v2');
    expect(refused(parseName('a;b'))).toBe(true);
    expect(refused(parseName('a b'))).toBe(true);
    expect(parseCookiePath('/app')).toBe('/app');
    expect(refused(parseCookiePath('/app; Domain=evil'))).toBe(true);
    expect(refused(parseCookiePath('app'))).toBe(true);
    expect(parseSameSite('lax')).toBe('Lax');
    expect(refused(parseSameSite('sometimes'))).toBe(true);
  });

  it.each([
    ['round_robin', 'roundrobin'],
    ['ewma', 'leastconn'],
    ['least_conn', 'leastconn'],
  ])('reads load-balance %s as HAProxy %s', (text, balance) => {
    expect(parseLoadBalance(text)).toBe(balance);
    expect(refused(parseLoadBalance('random; x'))).toBe(true);
  });

  it.each([
    ['$http_x_user_id', { kind: 'header', name: 'x-user-id' }],
    ['$cookie_session', { kind: 'cookie', name: 'session' }],
    ['$remote_addr', { kind: 'source' }],
    ['$binary_remote_addr', { kind: 'source' }],
    ['$request_uri', { kind: 'uri' }],
  ])('reads upstream-hash-by %s', (text, hash) => {
    expect(parseHashBy(text)).toEqual(hash);
  });

  it.each(['$http_X(1)', '$arg_id', 'src', '$cookie_a;b', '$http_'])(
    'refuses upstream-hash-by %s',
    (text) => {
      expect(refused(parseHashBy(text))).toBe(true);
    },
  );
});

describe('a canary header value', () => {
  it.each(['-m', '-f', '-u', '--'])('refuses %s, which HAProxy reads as an ACL flag', (text) => {
    expect(refused(parseToken(text))).toBe(true);
  });

  it('accepts a value with inner dashes', () => {
    expect(parseToken('v2-beta')).toBe('v2-beta');
  });
});
