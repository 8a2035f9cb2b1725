/**
 * Parsers of the annotation values that shape traffic rather than routes: CORS, cookie
 * affinity, the balancing algorithm and rate limits. Like annotation-values.ts: each returns a
 * typed value a template writes into haproxy.cfg as it is (names, numbers, lists of tokens,
 * none holding a space, quote, `$`, `%` or `\`), or the form it should have.
 */
import type { Parsed } from './annotation-values.ts';

/** A header name (RFC 9110 token). */
const tokenPattern = /^[A-Za-z0-9!#&'*+.^_`|~-]{1,64}$/;
/** Letters, digits and `-_`: a cookie or header name written unquoted. */
const namePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** A comma-separated list, each item checked by `ok`, at most `max` items. */
function listOf(text: string, ok: (item: string) => boolean, max = 32): string[] | undefined {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0 || items.length > max || !items.every(ok)) return undefined;
  return items;
}

/** `*`, or origins `https://a.example.com[:port]` (no path), comma-separated. */
export function parseCorsOrigins(text: string): Parsed<readonly string[]> {
  if (text.trim() === '*') return ['*'];
  const origin =
    /^https?:\/\/([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(:[0-9]{1,5})?$/;
  const list = listOf(text.toLowerCase(), (item) => item.length <= 253 && origin.test(item));
  return list ?? { expected: '"*" or comma-separated origins ("https://app.example.com")' };
}

/** HTTP methods, upper case, comma-separated (`GET, PUT, POST`). */
export function parseMethods(text: string): Parsed<readonly string[]> {
  const list = listOf(text.toUpperCase(), (item) => /^[A-Z]{1,16}$/.test(item));
  return list ?? { expected: 'comma-separated HTTP methods ("GET, PUT, POST")' };
}

/** Header names, comma-separated (`Authorization, X-Trace`). */
export function parseHeaderNames(text: string): Parsed<readonly string[]> {
  const list = listOf(text, (item) => tokenPattern.test(item), 64);
  return list ?? { expected: 'comma-separated header names ("Authorization, X-Trace")' };
}

/** A whole number from `min` to `max`, read from at most 9 digits. */
function wholeNumber(min: number, max: number, what: string): (text: string) => Parsed<number> {
  return (text) => {
    const value = text.trim();
    if (/^[0-9]{1,9}$/.test(value) && Number(value) >= min && Number(value) <= max) {
      return Number(value);
    }
    return { expected: `${what} from ${min} to ${max}` };
  };
}

/** Whole seconds from 0 to `max` (`Access-Control-Max-Age`). */
export const parseSeconds = (max: number) => wholeNumber(0, max, 'whole seconds');

/** A whole number from 0 to `max` (a canary's weight). */
export const parseWeight = (max: number) => wholeNumber(0, max, 'a whole number');

/** A positive whole number up to `max` (requests per second, connections, a cookie's Max-Age). */
export const parseCount = (max: number) => wholeNumber(1, max, 'a whole number');

/** A cookie or header name of letters, digits, `-` and `_`. */
export function parseName(text: string): Parsed<string> {
  const value = text.trim();
  if (namePattern.test(value)) return value;
  return { expected: 'a name of letters, digits, "-" and "_" (at most 64)' };
}

/** A cookie path: `/` then path characters, no `;`, `%` or space. */
export function parseCookiePath(text: string): Parsed<string> {
  const value = text.trim();
  if (/^\/[A-Za-z0-9\-._~!&()*+,=:@/]{0,255}$/.test(value)) return value;
  return { expected: 'an absolute path of URL path characters without ";" ("/app")' };
}

export type SameSite = 'Strict' | 'Lax' | 'None';

export function parseSameSite(text: string): Parsed<SameSite> {
  const value = text.trim().toLowerCase();
  if (value === 'strict') return 'Strict';
  if (value === 'lax') return 'Lax';
  if (value === 'none') return 'None';
  return { expected: 'one of Strict, Lax, None' };
}

/** `cookie`: the only affinity ingress-nginx has. */
export function parseAffinity(text: string): Parsed<'cookie'> {
  return text.trim() === 'cookie' ? 'cookie' : { expected: '"cookie"' };
}

/** How HAProxy picks a server: roundrobin or leastconn (ingress-nginx's ewma reads as leastconn). */
export type Balance = 'roundrobin' | 'leastconn';

export function parseLoadBalance(text: string): Parsed<Balance> {
  const value = text.trim();
  if (value === 'round_robin') return 'roundrobin';
  if (value === 'ewma' || value === 'least_conn') return 'leastconn';
  return { expected: 'one of round_robin, ewma, least_conn' };
}

/**
 * What to hash a request by (ingress-nginx's upstream-hash-by): a header (`$http_x_user`), a
 * cookie (`$cookie_session`), the client address (`$remote_addr`, `$binary_remote_addr`) or
 * the path (`$uri`, `$request_uri`). As HAProxy's `balance`: `hdr(x-user)`, `source`, `uri`;
 * a cookie hashes with `hash req.cook(name)`.
 */
export type HashBy =
  | { readonly kind: 'header'; readonly name: string }
  | { readonly kind: 'cookie'; readonly name: string }
  | { readonly kind: 'source' }
  | { readonly kind: 'uri' };

export function parseHashBy(text: string): Parsed<HashBy> {
  const value = text.trim();
  const header = /^\$http_([a-z0-9_]{1,64})$/.exec(value);
  if (header !== null) return { kind: 'header', name: (header[1] ?? '').replace(/_/g, '-') };
  const cookie = /^\$cookie_([A-Za-z0-9_-]{1,64})$/.exec(value);
  if (cookie !== null) return { kind: 'cookie', name: cookie[1] ?? '' };
  if (value === '$remote_addr' || value === '$binary_remote_addr') return { kind: 'source' };
  if (value === '$uri' || value === '$request_uri') return { kind: 'uri' };
  return {
    expected:
      'one of $http_<header>, $cookie_<name>, $remote_addr, $binary_remote_addr, $uri, $request_uri',
  };
}

/**
 * A header value to compare with: letters, digits and `-_.~`, at most 128, not starting with
 * `-` (HAProxy would read `-m`, `-f`, `-u` in an ACL as flags).
 */
export function parseToken(text: string): Parsed<string> {
  const value = text.trim();
  if (/^[A-Za-z0-9._~][A-Za-z0-9._~-]{0,127}$/.test(value)) return value;
  return { expected: 'letters, digits and -_.~, not starting with "-" (at most 128)' };
}
