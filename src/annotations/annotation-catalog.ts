/**
 * The Ingress annotations this controller reads: their names under ingress-nginx's prefix and,
 * where HAProxy's own controller has one, under `haproxy.org/`, the parser of each, and what
 * it sets. Also the annotations it refuses: snippets (free text into the proxy's
 * configuration, never rendered) and those whose absence would open what the Ingress closes
 * (authentication not served yet): their routes are left out rather than served without it.
 */
import {
  type BackendProtocol,
  type Parsed,
  type RedirectCode,
  type RewriteTarget,
  isExpected,
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
};

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

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

function setting<T>(
  parse: (value: string) => Parsed<T>,
  set: (options: Mutable<IngressOptions>, value: T) => void,
): SupportedAnnotation['apply'] {
  return (text, options) => {
    const parsed = parse(text);
    if (!isExpected(parsed)) set(options, parsed);
    return parsed;
  };
}

export const supportedAnnotations: readonly SupportedAnnotation[] = [
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
    effect: 'how HAProxy talks to the Service: HTTP, HTTPS, GRPC (h2c), GRPCS (h2 over TLS), H2C',
    apply: setting(parseBackendProtocol, (o, v) => (o.backendProtocol = v)),
  },
  {
    nginx: 'upstream-vhost',
    effect: 'the Host header the backend receives',
    apply: setting(parseHostName, (o, v) => (o.upstreamVhost = v)),
  },
];

/** Why an annotation is refused: the sentence's end after "is refused: ". */
export interface RefusedAnnotation {
  readonly name: string;
  readonly why: string;
}

const snippet =
  "it is free text for the proxy's configuration, which this controller never renders (one tenant's snippet would run in every tenant's HAProxy); use the supported annotations or a template of the HAProxyTemplateConfig";
const notYet =
  'authentication is not served by this controller yet, and serving the routes without it would open what the Ingress closes; keep this Ingress on ingress-nginx, or put the authentication in the application';

/** Annotations whose routes are left out: exact names, and name prefixes ending in `-`. */
export const refusedAnnotations: readonly RefusedAnnotation[] = [
  { name: `${nginxPrefix}configuration-snippet`, why: snippet },
  { name: `${nginxPrefix}server-snippet`, why: snippet },
  { name: `${nginxPrefix}auth-snippet`, why: snippet },
  { name: `${nginxPrefix}stream-snippet`, why: snippet },
  { name: `${nginxPrefix}modsecurity-snippet`, why: snippet },
  { name: `${haproxyPrefix}backend-config-snippet`, why: snippet },
  { name: `${haproxyPrefix}frontend-config-snippet`, why: snippet },
  { name: `${haproxyPrefix}global-config-snippet`, why: snippet },
  { name: `${nginxPrefix}auth-`, why: notYet },
  { name: `${haproxyPrefix}auth-`, why: notYet },
];

/** The refusal of annotation `name`, if it is refused. */
export function refusalOf(name: string): RefusedAnnotation | undefined {
  return refusedAnnotations.find((refused) =>
    refused.name.endsWith('-') ? name.startsWith(refused.name) : name === refused.name,
  );
}

/** Every supported annotation by its full name. */
export const annotationsByName: ReadonlyMap<string, SupportedAnnotation> = new Map(
  supportedAnnotations.flatMap((annotation) => [
    ...(annotation.nginx === undefined
      ? []
      : [[`${nginxPrefix}${annotation.nginx}`, annotation] as const]),
    ...(annotation.haproxy ?? []).map((name) => [`${haproxyPrefix}${name}`, annotation] as const),
  ]),
);
