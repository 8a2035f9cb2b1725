/**
 * Every annotation ingress-nginx documents (controller v1.12 and v1.13, the "Annotations" page,
 * plus the few its controller reads without documenting them) and what becomes of it here.
 * The status of a name the catalog knows is the catalog's: refused (refusalOf) or supported
 * (annotationsByName), with the catalog's own effect or refusal as the note; only names the
 * catalog serves differently from ingress-nginx, and names it does not read, have a note
 * written here. docs/ingress-migration.md and `haptic ingress lint` read this table.
 */
import { annotationsByName, nginxPrefix, refusalOf } from './annotation-catalog.ts';

/**
 * - supported: served as ingress-nginx serves it;
 * - differently: served, with a difference the note names;
 * - refused: the Ingress's routes are left out while it has the annotation;
 * - unsupported: not read; the routes are served without it.
 */
export type MigrationStatus = 'supported' | 'differently' | 'refused' | 'unsupported';

export interface NginxAnnotation {
  /** The name after `nginx.ingress.kubernetes.io/`. */
  readonly name: string;
  readonly status: MigrationStatus;
  /** One sentence: what happens here, and for one not served, why and what to do instead. */
  readonly note: string;
}

/** Names ingress-nginx documents on its Annotations page, in alphabetical order. */
const documented = `
affinity affinity-canary-behavior affinity-mode app-root auth-always-set-cookie
auth-cache-duration auth-cache-key auth-keepalive auth-keepalive-requests
auth-keepalive-share-vars auth-keepalive-timeout auth-method auth-proxy-set-headers auth-realm
auth-request-redirect auth-response-headers auth-secret auth-secret-type auth-signin
auth-signin-redirect-param auth-snippet auth-tls-error-page auth-tls-match-cn
auth-tls-pass-certificate-to-upstream auth-tls-secret auth-tls-verify-client
auth-tls-verify-depth auth-type auth-url backend-protocol canary canary-by-cookie
canary-by-header canary-by-header-pattern canary-by-header-value canary-weight
canary-weight-total client-body-buffer-size configuration-snippet connection-proxy-header
cors-allow-credentials cors-allow-headers cors-allow-methods cors-allow-origin
cors-expose-headers cors-max-age custom-headers custom-http-errors default-backend
denylist-source-range enable-access-log enable-cors enable-global-auth enable-modsecurity
enable-opentelemetry enable-owasp-core-rules enable-rewrite-log force-ssl-redirect
from-to-www-redirect http2-push-preload limit-burst-multiplier limit-connections limit-rate
limit-rate-after limit-rpm limit-rps limit-whitelist load-balance mirror-host
mirror-request-body mirror-target modsecurity-snippet modsecurity-transaction-id
opentelemetry-trust-incoming-span permanent-redirect permanent-redirect-code
preserve-trailing-slash proxy-body-size proxy-buffer-size proxy-buffering proxy-buffers-number
proxy-busy-buffers-size proxy-connect-timeout proxy-cookie-domain proxy-cookie-path
proxy-http-version proxy-max-temp-file-size proxy-next-upstream proxy-next-upstream-timeout
proxy-next-upstream-tries proxy-read-timeout proxy-redirect-from proxy-redirect-to
proxy-request-buffering proxy-send-timeout proxy-ssl-ciphers proxy-ssl-name proxy-ssl-protocols
proxy-ssl-secret proxy-ssl-server-name proxy-ssl-verify proxy-ssl-verify-depth rewrite-target
satisfy server-alias server-snippet service-upstream session-cookie-change-on-failure
session-cookie-conditional-samesite-none session-cookie-domain session-cookie-expires
session-cookie-max-age session-cookie-name session-cookie-path session-cookie-samesite
session-cookie-secure ssl-ciphers ssl-passthrough ssl-prefer-server-ciphers ssl-redirect
stream-snippet temporal-redirect temporal-redirect-code upstream-hash-by
upstream-hash-by-subset upstream-hash-by-subset-size upstream-vhost use-regex
whitelist-source-range x-forwarded-prefix`;

/** Names ingress-nginx's controller reads that its Annotations page does not list. */
const undocumented = `
allowlist-source-range disable-proxy-intercept-errors fastcgi-index fastcgi-params-configmap
limit-allowlist opentelemetry-operation-name relative-redirects use-port-in-redirects`;

function names(text: string): string[] {
  return text.split(/\s+/).filter((name) => name !== '');
}

/** How names the catalog serves differ from ingress-nginx. */
const differences: Readonly<Record<string, string>> = {
  'ssl-redirect':
    "Redirects HTTP to HTTPS (308) on the hosts of this Ingress's own spec.tls, not on hosts another Ingress gives TLS, and keeps a trailing slash that ingress-nginx drops unless preserve-trailing-slash is set.",
  'force-ssl-redirect':
    'Redirects HTTP to HTTPS on every host of the Ingress, TLS host or not, and keeps a trailing slash that ingress-nginx drops unless preserve-trailing-slash is set.',
  'use-regex':
    "Only this Ingress's paths become regular expressions (ingress-nginx makes every path of the host one, whichever Ingress has it), matched case-insensitively from the path's start as ingress-nginx does.",
  'rewrite-target':
    "The path the backend receives, $1…$9 naming the path regex's groups as in ingress-nginx, but only this Ingress's paths become regular expressions, not every path of the host.",
  'proxy-read-timeout':
    "Sets HAProxy's one timeout server for the backend, as proxy-send-timeout does: the larger of the two wins.",
  'proxy-send-timeout':
    "Sets HAProxy's one timeout server for the backend, as proxy-read-timeout does: the larger of the two wins.",
  'proxy-body-size':
    'Requests whose Content-Length is larger are answered 413 (default 1m, "0" for no limit); a chunked request body, which declares no length, is not counted.',
  'backend-protocol':
    "HTTP, HTTPS, GRPC and GRPCS as in ingress-nginx (HTTPS and GRPCS without verifying the Service's certificate, ingress-nginx's default), plus H2C; AUTO_HTTP and FCGI are invalid here, so an Ingress asking them is left out.",
};

/** `record[key]` if the record has it as its own key (never a prototype's, such as constructor). */
function own(record: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function each(list: string, note: string): Record<string, string> {
  return Object.fromEntries(names(list).map((name) => [name, note]));
}

/** Why names the catalog does not read are not served, and what to do instead. */
const notServed: Readonly<Record<string, string>> = {
  'canary-by-header-pattern':
    'Not served yet: the header picks the canary by "always" or canary-by-header-value only; a pattern is ignored.',
  ...each(
    'affinity session-cookie-name session-cookie-max-age session-cookie-path session-cookie-samesite',
    'Cookie session affinity is not served yet: requests are balanced round robin over the ready endpoints, so keep session state out of the Pods meanwhile.',
  ),
  'affinity-mode':
    'Not served yet: how sessions move when endpoints change (balanced or persistent) is not set per Ingress.',
  'affinity-canary-behavior': 'It only matters for canaries, which are not served yet.',
  ...each(
    `session-cookie-change-on-failure session-cookie-conditional-samesite-none
    session-cookie-domain session-cookie-expires session-cookie-secure`,
    'Not served yet: no affinity cookie written here carries this setting.',
  ),
  'enable-global-auth':
    "The global external authentication of ingress-nginx (its ConfigMap's global-auth-url) is not served yet, so routes that relied on it are served without it; move that authentication into the application first.",
  satisfy:
    'It only combines authentication requirements, and the authentication annotations (auth-*) are refused, so it changes nothing.',
  ...each(
    `client-body-buffer-size proxy-buffering proxy-buffers-number proxy-buffer-size
    proxy-busy-buffers-size proxy-max-temp-file-size proxy-request-buffering`,
    'NGINX buffer tuning has no per-Ingress counterpart: HAProxy streams requests and responses through its own fixed-size buffers.',
  ),
  ...each(
    'custom-http-errors disable-proxy-intercept-errors',
    "Custom error pages are not served yet: the Service's own error answers reach the client, so serve the pages from the application.",
  ),
  'custom-headers':
    'Response headers from a ConfigMap are not served yet; set them in the application, or with http-response set-header in a template of the HAProxyTemplateConfig.',
  'default-backend':
    "Not served yet: a Service without ready endpoints is answered with HAProxy's 503, while the Ingress's own spec.defaultBackend is served as its catch-all route.",
  ...each(
    `enable-cors cors-allow-origin cors-allow-methods cors-allow-headers cors-expose-headers
    cors-allow-credentials cors-max-age`,
    'CORS is not served yet: preflight requests reach the Service, so answer CORS in the application meanwhile.',
  ),
  'from-to-www-redirect':
    'Not served yet: give the other name (with or without www) an Ingress of its own with permanent-redirect to this host.',
  'http2-push-preload':
    'HTTP/2 server push is not served (HAProxy has none and browsers dropped it); remove the annotation.',
  ...each(
    'limit-rps limit-connections',
    'Rate limits are not served yet: requests are not limited per client; a template can limit them with HAProxy stick tables meanwhile.',
  ),
  'limit-rpm':
    'Not served yet: a limit per minute is not set; a template can limit requests with HAProxy stick tables.',
  'limit-burst-multiplier':
    'Not served yet: the burst allowed above a limit is not set per Ingress.',
  ...each(
    'limit-whitelist limit-allowlist',
    'Not served yet: no client address is exempt from the limits of this Ingress.',
  ),
  ...each(
    'limit-rate limit-rate-after',
    "Bandwidth limits are not served yet; a template can limit responses with HAProxy's bwlim-out filter meanwhile.",
  ),
  'preserve-trailing-slash':
    'Needless here: the redirect to HTTPS always keeps the path as it was, trailing slash included.',
  ...each(
    'proxy-cookie-domain proxy-cookie-path',
    'Set-Cookie rewriting is not served yet; have the application set the domain and path it is reached under.',
  ),
  ...each(
    'proxy-next-upstream proxy-next-upstream-timeout proxy-next-upstream-tries',
    "Not served yet: retrying a request on another endpoint follows the template's retries and option redispatch, the same for every backend.",
  ),
  ...each(
    'proxy-redirect-from proxy-redirect-to',
    'Location rewriting is not served yet; have the application send the Location it is reached under (it receives X-Forwarded-Host and X-Forwarded-Proto).',
  ),
  'proxy-http-version':
    'HAProxy talks HTTP/1.1 to the Service (HTTP/2 with backend-protocol GRPC, GRPCS or H2C); HTTP/1.0 is not offered.',
  ...each(
    `proxy-ssl-secret proxy-ssl-ciphers proxy-ssl-name proxy-ssl-protocols proxy-ssl-verify
    proxy-ssl-verify-depth proxy-ssl-server-name`,
    "Not served yet: with backend-protocol HTTPS or GRPCS, HAProxy connects without a client certificate and without verifying the Service's certificate (ingress-nginx's default).",
  ),
  'enable-rewrite-log':
    "NGINX's rewrite debug log has no counterpart; HAProxy logs every request with the backend that served it.",
  'server-alias':
    'Not served yet: add the alias as another rule host of the Ingress, with the same paths.',
  'service-upstream':
    "Not served: HAProxy sends requests to the Service's ready endpoints directly, and endpoint changes reach it without a reload.",
  ...each(
    'ssl-ciphers ssl-prefer-server-ciphers',
    "TLS settings are the template's, the same for every host (ssl-default-bind-ciphers and ssl-default-bind-options); they are not set per Ingress.",
  ),
  'ssl-passthrough':
    'TLS passthrough is not served yet: HAProxy terminates TLS for the host and sends HTTP to the Service, so keep such Ingresses on ingress-nginx.',
  ...each(
    'upstream-hash-by load-balance',
    'Not served yet: requests are balanced round robin; a template can choose another balance algorithm for every backend.',
  ),
  ...each(
    'upstream-hash-by-subset upstream-hash-by-subset-size',
    'Not served yet: consistent hashing to a subset of the endpoints is not set per Ingress.',
  ),
  'x-forwarded-prefix':
    'Not served yet: the backend receives no X-Forwarded-Prefix, so configure the prefix in the application.',
  'connection-proxy-header':
    'HAProxy manages the Connection header to the Service itself (keep-alive, upgrades); it is not set per Ingress.',
  'enable-access-log': 'HAProxy logs every request; turning the log off per Ingress is not served.',
  ...each(
    'enable-opentelemetry opentelemetry-trust-incoming-span opentelemetry-operation-name',
    "Not planned: HAProxy's OpenTelemetry filter loads code, which the configuration lint refuses; trace in the application or a sidecar.",
  ),
  ...each(
    'enable-modsecurity enable-owasp-core-rules modsecurity-transaction-id',
    'Not planned: no web application firewall runs inside HAProxy here (SPOE agents are refused by the configuration lint); run one as a sidecar beside the application.',
  ),
  ...each(
    'mirror-target mirror-host mirror-request-body',
    'Request mirroring is not served yet (HAProxy mirrors only through an SPOE agent, which the configuration lint refuses); mirror in the application or a sidecar.',
  ),
  ...each(
    'fastcgi-index fastcgi-params-configmap',
    'FastCGI is not served (backend-protocol FCGI is invalid here); serve the application over HTTP.',
  ),
  'relative-redirects':
    'Redirects made here are as written: absolute URLs for HTTPS and for permanent-redirect and temporal-redirect, the path for app-root; this is not set per Ingress.',
  'use-port-in-redirects':
    "Not served: the redirect to HTTPS goes to the request's host without a port (port 443), as ingress-nginx's default does.",
};

/**
 * A catalog effect as a sentence: with a full stop, and capitalised when it starts with a plain
 * word (not a name such as round_robin or $host).
 */
function sentence(text: string): string {
  const capitalised = /^[a-z]+[ ,:;]/.test(text)
    ? `${text.charAt(0).toUpperCase()}${text.slice(1)}`
    : text;
  return `${capitalised}${capitalised.endsWith('.') ? '' : '.'}`;
}

/** The note for a name neither the catalog nor this table knows (a test holds there is none). */
const unknownNote = 'This controller does not read it; the routes are served without it.';

/**
 * What becomes of annotation `fullName` (under ingress-nginx's or HAProxy's prefix) here, with
 * this table's notes for ingress-nginx's names: the catalog's refusal or effect where it knows
 * the name.
 */
export function annotationStatus(fullName: string): Omit<NginxAnnotation, 'name'> {
  const refusal = refusalOf(fullName);
  if (refusal !== undefined) {
    return { status: 'refused', note: `The Ingress's routes are left out: ${refusal.why}.` };
  }
  const name = fullName.startsWith(nginxPrefix) ? fullName.slice(nginxPrefix.length) : undefined;
  const supported = annotationsByName.get(fullName);
  if (supported !== undefined) {
    const difference = name === undefined ? undefined : own(differences, name);
    return difference === undefined
      ? { status: 'supported', note: sentence(supported.effect) }
      : { status: 'differently', note: difference };
  }
  return {
    status: 'unsupported',
    note: (name === undefined ? undefined : own(notServed, name)) ?? unknownNote,
  };
}

/** What becomes of `nginx.ingress.kubernetes.io/<name>` here. */
export function nginxAnnotation(name: string): NginxAnnotation {
  return { name, ...annotationStatus(`${nginxPrefix}${name}`) };
}

/** The names this table holds: documented, undocumented, and every nginx name of the catalog. */
export const nginxAnnotationNames: readonly string[] = [
  ...new Set([
    ...names(documented),
    ...names(undocumented),
    ...[...annotationsByName.keys()]
      .filter((full) => full.startsWith(nginxPrefix))
      .map((full) => full.slice(nginxPrefix.length)),
  ]),
].sort();

/** Every ingress-nginx annotation and what becomes of it, by name. */
export const nginxAnnotations: readonly NginxAnnotation[] =
  nginxAnnotationNames.map(nginxAnnotation);

/**
 * Where the notes written here are out of step with the catalog, one sentence each: a listed
 * name the catalog neither reads nor refuses that has no note of why, a note for a name that is
 * not listed, a difference noted for a name the catalog does not serve. Empty when the table is
 * whole; the migration page is not written otherwise. (A note of why a name is not served is
 * read only while the catalog neither reads nor refuses it, so the catalog's status always wins.)
 */
export function nginxTableProblems(): string[] {
  const problems: string[] = [];
  const served = (name: string): boolean =>
    refusalOf(`${nginxPrefix}${name}`) === undefined &&
    annotationsByName.has(`${nginxPrefix}${name}`);
  for (const { name, status } of nginxAnnotations) {
    if (status === 'unsupported' && own(notServed, name) === undefined) {
      problems.push(`${name} is neither read nor refused by the catalog, and has no note of why.`);
    }
  }
  for (const name of Object.keys(notServed)) {
    if (!nginxAnnotationNames.includes(name)) {
      problems.push(`${name} has a note of why it is not served, but is not listed.`);
    }
  }
  for (const name of Object.keys(differences)) {
    if (!served(name))
      problems.push(`${name} has a difference noted, but the catalog does not serve it.`);
  }
  return problems;
}
