/**
 * What one route asks of the backend that serves it, from its Ingress's options, its path and
 * whether its host is one of the Ingress's TLS hosts. Every field is a value a template writes
 * into haproxy.cfg as it is: numbers, addresses, HAProxy durations, a regex for single quotes,
 * a log-format text. Routes of the same Service port with the same options share a backend;
 * `key` tells them apart (empty for a route asking nothing beyond the defaults).
 */
import { createHash } from 'node:crypto';
import type { IngressOptions } from './option-types.ts';
import type { HashBy } from './traffic-values.ts';
import {
  type BackendProtocol,
  type PathRegex,
  type RedirectCode,
  haproxyDuration,
} from './annotation-values.ts';

export interface BackendOptions {
  /** `''` for the defaults, else 16 hex digits naming these options. */
  readonly key: string;
  /** Redirect HTTP to HTTPS with this status. */
  readonly sslRedirectCode: RedirectCode | null;
  /** Send Strict-Transport-Security on HTTPS answers. */
  readonly hsts: boolean;
  /** Redirect every request: location in log-format form (`%` doubled). */
  readonly redirect: { readonly location: string; readonly code: RedirectCode } | null;
  /** Redirect requests for `/` here (302). */
  readonly appRoot: string | null;
  /** Rewrite the path: `regex` for single quotes (PCRE2), `format` with `\\1`…`\\9` (no `%`). */
  readonly rewrite: { readonly regex: string; readonly format: string } | null;
  /** HAProxy durations (`5s`, `500ms`). */
  readonly connectTimeout: string | null;
  readonly serverTimeout: string | null;
  /** Largest Content-Length served; null: no limit. */
  readonly maxBodyBytes: number | null;
  /** Client addresses and ranges served (others 403); null: all. */
  readonly allowRanges: readonly string[] | null;
  /** Client addresses and ranges answered 403. */
  readonly denyRanges: readonly string[] | null;
  /** backend-protocol; null: as the Service port's appProtocol says (ModelBackend.protocol). */
  readonly protocol: BackendProtocol | null;
  /** The Host header the servers receive. */
  readonly upstreamHost: string | null;
  /** CORS: the headers' values, lists joined with `, `. */
  readonly cors: {
    /** `*`, or origins echoed back when the request's Origin is one of them. */
    readonly origins: readonly string[];
    readonly methods: string;
    readonly headers: string;
    readonly exposeHeaders: string | null;
    readonly credentials: boolean;
    readonly maxAge: number;
  } | null;
  /** Cookie affinity: the cookie HAProxy inserts, naming the server slot. */
  readonly affinity: {
    readonly cookie: string;
    readonly maxAge: number | null;
    readonly path: string;
    readonly sameSite: string | null;
  } | null;
  /** HAProxy's `balance` arguments: `roundrobin`, `leastconn`, `hdr(x-user)`, `source`, `uri`, `hash req.cook(name)`. */
  readonly balance: string;
  /** Per client address, per HAProxy replica. */
  readonly limitRps: number | null;
  readonly limitConnections: number | null;
}

export interface RouteFacts {
  /** The path regex, when the Ingress's paths are regexes. */
  readonly regex: PathRegex | undefined;
  /** The route's host is among the Ingress's TLS hosts. */
  readonly tlsHost: boolean;
}

/** A path regex as PCRE2 reads it here: case-insensitive, from the path's start. */
export function anchoredRegex(source: string): string {
  return `(?i)^(?:${source})`;
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

/** The Ingress's paths are regular expressions. */
export function pathsAreRegex(options: IngressOptions): boolean {
  return options.useRegex || options.rewriteTarget !== undefined;
}

type Unkeyed = Omit<BackendOptions, 'key'>;

const plain: Unkeyed = {
  sslRedirectCode: null,
  hsts: false,
  redirect: null,
  appRoot: null,
  rewrite: null,
  connectTimeout: null,
  serverTimeout: null,
  maxBodyBytes: 1024 * 1024,
  allowRanges: null,
  denyRanges: null,
  protocol: null,
  upstreamHost: null,
  cors: null,
  affinity: null,
  balance: 'roundrobin',
  limitRps: null,
  limitConnections: null,
};
const plainText = JSON.stringify(plain);

/** Options made once per distinct text, so routes asking the same share one object. */
const made = new Map<string, BackendOptions>();
const maxMade = 65_536;

function keyed(options: Unkeyed): BackendOptions {
  const text = JSON.stringify(options);
  let found = made.get(text);
  if (found === undefined) {
    const key =
      text === plainText ? '' : createHash('sha256').update(text).digest('hex').slice(0, 16);
    found = { key, ...options };
    if (made.size >= maxMade) made.clear();
    made.set(text, found);
  }
  return found;
}

function balanceOf(options: IngressOptions): string {
  const hash: HashBy | undefined = options.hashBy;
  if (hash === undefined) return options.loadBalance ?? 'roundrobin';
  switch (hash.kind) {
    case 'header':
      return `hdr(${hash.name})`;
    case 'cookie':
      return `hash req.cook(${hash.name})`;
    case 'source':
    case 'uri':
      return hash.kind;
  }
}

function corsOf(options: IngressOptions): BackendOptions['cors'] {
  if (!options.enableCors) return null;
  return {
    origins: options.corsOrigins,
    methods: options.corsMethods.join(', '),
    headers: options.corsHeaders.join(', '),
    exposeHeaders: options.corsExposeHeaders?.join(', ') ?? null,
    credentials: options.corsCredentials,
    maxAge: options.corsMaxAge,
  };
}

function affinityOf(options: IngressOptions): BackendOptions['affinity'] {
  if (options.affinity === undefined) return null;
  return {
    cookie: options.sessionCookieName,
    maxAge: options.sessionCookieMaxAge ?? null,
    path: options.sessionCookiePath ?? '/',
    sameSite: options.sessionCookieSameSite ?? null,
  };
}

/**
 * The backend options of one route, or the sentence's end saying why the route cannot be
 * served (a rewrite-target naming a group its path regex does not have).
 */
export function routeOptions(
  options: IngressOptions,
  facts: RouteFacts,
): BackendOptions | { readonly problem: string } {
  const redirectTo =
    options.permanentRedirect !== undefined
      ? { location: options.permanentRedirect, code: options.permanentRedirectCode }
      : options.temporalRedirect !== undefined
        ? { location: options.temporalRedirect, code: options.temporalRedirectCode }
        : null;
  let rewrite: BackendOptions['rewrite'] = null;
  const target = options.rewriteTarget;
  if (target !== undefined && facts.regex !== undefined) {
    if (target.highestGroup > facts.regex.groups) {
      return {
        problem: `rewrite-target names $${target.highestGroup}, but the path ${JSON.stringify(facts.regex.source)} has ${facts.regex.groups} capture group(s)`,
      };
    }
    rewrite = { regex: anchoredRegex(facts.regex.source), format: target.format };
  }
  const redirectsToHttps = options.forceSslRedirect || (options.sslRedirect && facts.tlsHost);
  return keyed({
    sslRedirectCode: redirectsToHttps ? options.sslRedirectCode : null,
    hsts: facts.tlsHost,
    redirect: redirectTo,
    appRoot: options.appRoot ?? null,
    rewrite,
    connectTimeout:
      options.connectTimeout === undefined ? null : haproxyDuration(options.connectTimeout),
    serverTimeout: ((ms) => (ms === undefined ? null : haproxyDuration(ms)))(
      maxOf(options.readTimeout, options.sendTimeout),
    ),
    maxBodyBytes: options.maxBodyBytes,
    allowRanges: options.allowRanges ?? null,
    denyRanges: options.denyRanges ?? null,
    protocol: options.backendProtocol ?? null,
    upstreamHost: options.upstreamVhost ?? null,
    cors: corsOf(options),
    affinity: affinityOf(options),
    balance: balanceOf(options),
    limitRps: options.limitRps ?? null,
    limitConnections: options.limitConnections ?? null,
  });
}

/** The options of a route that asks nothing: the defaults. */
export const plainBackendOptions: BackendOptions = keyed(plain);

/** How a canary Ingress takes requests from its primary. */
export interface CanarySpec {
  /** Of `weightTotal`. */
  readonly weight: number;
  readonly weightTotal: number;
  readonly header: string | null;
  /** The header's value that picks the canary; null: `always`. */
  readonly headerValue: string | null;
  readonly cookie: string | null;
}

/** The Ingress's canary settings, when it is a canary. */
export function canaryOf(options: IngressOptions): CanarySpec | undefined {
  if (!options.canary) return undefined;
  return {
    weight: Math.min(options.canaryWeight, options.canaryWeightTotal),
    weightTotal: options.canaryWeightTotal,
    header: options.canaryByHeader ?? null,
    headerValue: options.canaryByHeaderValue ?? null,
    cookie: options.canaryByCookie ?? null,
  };
}
