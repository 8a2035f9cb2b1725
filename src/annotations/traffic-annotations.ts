/**
 * The supported annotations that shape traffic: CORS, cookie affinity, the balancing algorithm
 * and the per-client limits (counted by each HAProxy replica on its own).
 */
import { parseBoolean } from './annotation-values.ts';
import { type SupportedAnnotation, setting } from './option-types.ts';
import {
  parseAffinity,
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
} from './traffic-values.ts';

const day = 86_400;

export const trafficAnnotations: readonly SupportedAnnotation[] = [
  {
    nginx: 'enable-cors',
    effect:
      'CORS: preflight OPTIONS requests answered 204 with the Access-Control-Allow-* headers, and Access-Control-Allow-Origin on answers',
    apply: setting(parseBoolean, (o, v) => (o.enableCors = v)),
  },
  {
    nginx: 'cors-allow-origin',
    effect: 'the origins CORS allows ("*" by default); a listed origin is echoed back',
    apply: setting(parseCorsOrigins, (o, v) => (o.corsOrigins = v)),
  },
  {
    nginx: 'cors-allow-methods',
    effect: 'Access-Control-Allow-Methods',
    apply: setting(parseMethods, (o, v) => (o.corsMethods = v)),
  },
  {
    nginx: 'cors-allow-headers',
    effect: 'Access-Control-Allow-Headers',
    apply: setting(parseHeaderNames, (o, v) => (o.corsHeaders = v)),
  },
  {
    nginx: 'cors-expose-headers',
    effect: 'Access-Control-Expose-Headers',
    apply: setting(parseHeaderNames, (o, v) => (o.corsExposeHeaders = v)),
  },
  {
    nginx: 'cors-allow-credentials',
    effect: 'Access-Control-Allow-Credentials (true by default)',
    apply: setting(parseBoolean, (o, v) => (o.corsCredentials = v)),
  },
  {
    nginx: 'cors-max-age',
    effect: 'Access-Control-Max-Age of preflight answers (1728000 by default)',
    apply: setting(parseSeconds(365 * day), (o, v) => (o.corsMaxAge = v)),
  },
  {
    nginx: 'affinity',
    effect: 'sticky sessions: HAProxy inserts a cookie naming the server slot',
    apply: setting(parseAffinity, (o, v) => (o.affinity = v)),
  },
  {
    nginx: 'session-cookie-name',
    effect: "the affinity cookie's name (INGRESSCOOKIE by default)",
    apply: setting(parseName, (o, v) => (o.sessionCookieName = v)),
  },
  {
    nginx: 'session-cookie-max-age',
    effect: "the affinity cookie's Max-Age, 1 s to a year (a session cookie by default)",
    apply: setting(parseCount(365 * day), (o, v) => (o.sessionCookieMaxAge = v)),
  },
  {
    nginx: 'session-cookie-path',
    effect: "the affinity cookie's Path (/ by default)",
    apply: setting(parseCookiePath, (o, v) => (o.sessionCookiePath = v)),
  },
  {
    nginx: 'session-cookie-samesite',
    effect: "the affinity cookie's SameSite",
    apply: setting(parseSameSite, (o, v) => (o.sessionCookieSameSite = v)),
  },
  {
    nginx: 'load-balance',
    effect: 'round_robin → roundrobin; ewma and least_conn → leastconn',
    apply: setting(parseLoadBalance, (o, v) => (o.loadBalance = v)),
  },
  {
    nginx: 'upstream-hash-by',
    effect:
      "consistent server choice by $http_<header>, $cookie_<name>, $remote_addr or $request_uri (HAProxy's balance hdr/hash/source/uri)",
    apply: setting(parseHashBy, (o, v) => (o.hashBy = v)),
  },
  {
    nginx: 'limit-rps',
    effect:
      'requests per second per client address, counted by each HAProxy replica on its own; over it: 503',
    apply: setting(parseCount(100_000), (o, v) => (o.limitRps = v)),
  },
  {
    nginx: 'limit-connections',
    effect:
      'concurrent requests per client address, counted by each HAProxy replica on its own; over it: 503',
    apply: setting(parseCount(100_000), (o, v) => (o.limitConnections = v)),
  },
];
