/**
 * The supported annotations that shape routes: HTTPS redirects, regex paths and rewrites,
 * redirects, timeouts, the body limit, address lists, the backend protocol and Host.
 */
import {
  parseBackendProtocol,
  parseBoolean,
  parseDuration,
  parseHostName,
  parseRanges,
  parseRedirectCode,
  parseRedirectUrl,
  parseRewriteTarget,
  parseSize,
  parseUrlPath,
} from './annotation-values.ts';
import { type SupportedAnnotation, setting } from './option-types.ts';

export const routeAnnotations: readonly SupportedAnnotation[] = [
  {
    nginx: 'ssl-redirect',
    haproxy: ['ssl-redirect'],
    effect: "HTTP requests to the Ingress's TLS hosts are redirected to HTTPS (on by default, 308)",
    apply: setting(parseBoolean, (o, v) => (o.sslRedirect = v)),
  },
  {
    nginx: 'force-ssl-redirect',
    effect: 'HTTP requests to every host of the Ingress are redirected to HTTPS, TLS host or not',
    apply: setting(parseBoolean, (o, v) => (o.forceSslRedirect = v)),
  },
  {
    haproxy: ['ssl-redirect-code'],
    effect: 'the status of the redirect to HTTPS',
    apply: setting(parseRedirectCode, (o, v) => (o.sslRedirectCode = v)),
  },
  {
    nginx: 'use-regex',
    effect: "the paths are regular expressions (PCRE2, case-insensitive, from the path's start)",
    apply: setting(parseBoolean, (o, v) => (o.useRegex = v)),
  },
  {
    nginx: 'rewrite-target',
    effect: 'the path the backend receives, with $1…$9 from the path regex (implies use-regex)',
    apply: setting(parseRewriteTarget, (o, v) => (o.rewriteTarget = v)),
  },
  {
    nginx: 'app-root',
    effect: 'requests for / are redirected (302) to this path',
    apply: setting(parseUrlPath, (o, v) => (o.appRoot = v)),
  },
  {
    nginx: 'permanent-redirect',
    effect: 'every request is redirected to this URL (301 unless permanent-redirect-code)',
    apply: setting(parseRedirectUrl, (o, v) => (o.permanentRedirect = v)),
  },
  {
    nginx: 'permanent-redirect-code',
    effect: 'the status of permanent-redirect',
    apply: setting(parseRedirectCode, (o, v) => (o.permanentRedirectCode = v)),
  },
  {
    nginx: 'temporal-redirect',
    effect: 'every request is redirected to this URL (302 unless temporal-redirect-code)',
    apply: setting(parseRedirectUrl, (o, v) => (o.temporalRedirect = v)),
  },
  {
    nginx: 'temporal-redirect-code',
    effect: 'the status of temporal-redirect',
    apply: setting(parseRedirectCode, (o, v) => (o.temporalRedirectCode = v)),
  },
  {
    nginx: 'proxy-connect-timeout',
    haproxy: ['timeout-connect'],
    effect: "HAProxy's connect timeout for the backend (timeout connect)",
    apply: setting(parseDuration, (o, v) => (o.connectTimeout = v)),
  },
  {
    nginx: 'proxy-read-timeout',
    haproxy: ['timeout-server'],
    effect: "HAProxy's server timeout (timeout server: the larger of read and send)",
    apply: setting(parseDuration, (o, v) => (o.readTimeout = v)),
  },
  {
    nginx: 'proxy-send-timeout',
    effect: "HAProxy's server timeout (timeout server: the larger of read and send)",
    apply: setting(parseDuration, (o, v) => (o.sendTimeout = v)),
  },
  {
    nginx: 'proxy-body-size',
    effect: 'requests declaring a larger Content-Length are answered 413 (default 1m, 0: no limit)',
    apply: setting(parseSize, (o, v) => (o.maxBodyBytes = v)),
  },
  {
    nginx: 'whitelist-source-range',
    haproxy: ['allow-list', 'whitelist'],
    effect: 'only these client addresses are served; others get 403',
    apply: setting(parseRanges, (o, v) => (o.allowRanges = v)),
  },
  {
    nginx: 'allowlist-source-range',
    effect: 'only these client addresses are served; others get 403',
    apply: setting(parseRanges, (o, v) => (o.allowRanges = v)),
  },
  {
    nginx: 'denylist-source-range',
    haproxy: ['deny-list', 'blacklist'],
    effect: 'these client addresses get 403',
    apply: setting(parseRanges, (o, v) => (o.denyRanges = v)),
  },
  {
    nginx: 'backend-protocol',
    effect:
      "how HAProxy talks to the Service: HTTP, HTTPS, GRPC (h2c), GRPCS (h2 over TLS), H2C; without it, the Service port's appProtocol",
    apply: setting(parseBackendProtocol, (o, v) => (o.backendProtocol = v)),
  },
  {
    nginx: 'upstream-vhost',
    effect: 'the Host header the backend receives',
    apply: setting(parseHostName, (o, v) => (o.upstreamVhost = v)),
  },
];
