/**
 * What an Ingress's annotations set: the options every route of the Ingress shares, their
 * defaults (ingress-nginx's), and the shape of one supported annotation. The annotations
 * themselves are listed in route-annotations.ts and traffic-annotations.ts, and looked up by
 * name in annotation-catalog.ts.
 */
import {
  type BackendProtocol,
  type Parsed,
  type RedirectCode,
  type RewriteTarget,
  isExpected,
} from './annotation-values.ts';
import type { Balance, HashBy, SameSite } from './traffic-values.ts';

export const nginxPrefix = 'nginx.ingress.kubernetes.io/';
export const haproxyPrefix = 'haproxy.org/';

/** What an Ingress's annotations ask of all its routes, parsed. */
export interface IngressOptions {
  /** Redirect HTTP to HTTPS on the Ingress's TLS hosts. @default true */
  readonly sslRedirect: boolean;
  /** Redirect HTTP to HTTPS on every host of the Ingress, TLS or not. @default false */
  readonly forceSslRedirect: boolean;
  /** @default 308 */
  readonly sslRedirectCode: RedirectCode;
  /** Paths are regular expressions (also with rewriteTarget). @default false */
  readonly useRegex: boolean;
  readonly rewriteTarget: RewriteTarget | undefined;
  readonly appRoot: string | undefined;
  readonly permanentRedirect: string | undefined;
  /** @default 301 */
  readonly permanentRedirectCode: RedirectCode;
  readonly temporalRedirect: string | undefined;
  /** @default 302 */
  readonly temporalRedirectCode: RedirectCode;
  /** Milliseconds. */
  readonly connectTimeout: number | undefined;
  readonly readTimeout: number | undefined;
  readonly sendTimeout: number | undefined;
  /** Bytes; null: no limit. @default 1 MiB (ingress-nginx's 1m) */
  readonly maxBodyBytes: number | null;
  readonly allowRanges: readonly string[] | undefined;
  readonly denyRanges: readonly string[] | undefined;
  readonly backendProtocol: BackendProtocol | undefined;
  readonly upstreamVhost: string | undefined;
  readonly enableCors: boolean;
  /** `['*']` or origins. @default ['*'] */
  readonly corsOrigins: readonly string[];
  readonly corsMethods: readonly string[];
  readonly corsHeaders: readonly string[];
  readonly corsExposeHeaders: readonly string[] | undefined;
  /** @default true */
  readonly corsCredentials: boolean;
  /** Seconds. @default 1728000 */
  readonly corsMaxAge: number;
  readonly affinity: 'cookie' | undefined;
  /** @default INGRESSCOOKIE */
  readonly sessionCookieName: string;
  readonly sessionCookieMaxAge: number | undefined;
  readonly sessionCookiePath: string | undefined;
  readonly sessionCookieSameSite: SameSite | undefined;
  readonly loadBalance: Balance | undefined;
  readonly hashBy: HashBy | undefined;
  /** Requests per second per client address, per HAProxy replica. */
  readonly limitRps: number | undefined;
  /** Concurrent connections per client address, per HAProxy replica. */
  readonly limitConnections: number | undefined;
  /** The Ingress is a canary of the Ingress that serves the same host and path. */
  readonly canary: boolean;
  /** Percent of requests (of canaryWeightTotal) the canary gets. @default 0 */
  readonly canaryWeight: number;
  /** @default 100 */
  readonly canaryWeightTotal: number;
  /** A header whose value `always`/`never` (or canaryByHeaderValue) picks the canary. */
  readonly canaryByHeader: string | undefined;
  readonly canaryByHeaderValue: string | undefined;
  /** A cookie whose value `always`/`never` picks the canary. */
  readonly canaryByCookie: string | undefined;
}

export const defaultIngressOptions: IngressOptions = {
  sslRedirect: true,
  forceSslRedirect: false,
  sslRedirectCode: 308,
  useRegex: false,
  rewriteTarget: undefined,
  appRoot: undefined,
  permanentRedirect: undefined,
  permanentRedirectCode: 301,
  temporalRedirect: undefined,
  temporalRedirectCode: 302,
  connectTimeout: undefined,
  readTimeout: undefined,
  sendTimeout: undefined,
  maxBodyBytes: 1024 * 1024,
  allowRanges: undefined,
  denyRanges: undefined,
  backendProtocol: undefined,
  upstreamVhost: undefined,
  // ingress-nginx's defaults for enable-cors.
  enableCors: false,
  corsOrigins: ['*'],
  corsMethods: ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'],
  corsHeaders: [
    ...['DNT', 'Keep-Alive', 'User-Agent', 'X-Requested-With', 'If-Modified-Since'],
    ...['Cache-Control', 'Content-Type', 'Range', 'Authorization'],
  ],
  corsExposeHeaders: undefined,
  corsCredentials: true,
  corsMaxAge: 1_728_000,
  affinity: undefined,
  sessionCookieName: 'INGRESSCOOKIE',
  sessionCookieMaxAge: undefined,
  sessionCookiePath: undefined,
  sessionCookieSameSite: undefined,
  loadBalance: undefined,
  hashBy: undefined,
  limitRps: undefined,
  limitConnections: undefined,
  canary: false,
  canaryWeight: 0,
  canaryWeightTotal: 100,
  canaryByHeader: undefined,
  canaryByHeaderValue: undefined,
  canaryByCookie: undefined,
};

export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One supported annotation: its names and how its value sets the options. */
export interface SupportedAnnotation {
  /** Name under nginx.ingress.kubernetes.io/, when ingress-nginx has it. */
  readonly nginx?: string;
  /** Names under haproxy.org/ (HAProxy Technologies' controller). */
  readonly haproxy?: readonly string[];
  /** What it does here, for `haptic ingress lint` and the migration guide. */
  readonly effect: string;
  readonly apply: (value: string, options: Mutable<IngressOptions>) => Parsed<unknown>;
}

export function setting<T>(
  parse: (value: string) => Parsed<T>,
  set: (options: Mutable<IngressOptions>, value: T) => void,
): SupportedAnnotation['apply'] {
  return (text, options) => {
    const parsed = parse(text);
    if (!isExpected(parsed)) set(options, parsed);
    return parsed;
  };
}
