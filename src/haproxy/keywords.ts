/**
 * What a rendered haproxy.cfg may contain: the sections, keywords, options, rule actions and
 * bind/server settings an ingress template needs, taken from HAProxy 2.6 to 3.2. Anything not
 * listed is refused, so a keyword HAProxy adds later (or one we did not think of) is refused
 * until someone decides it is safe. Matching is exact and case-sensitive, as HAProxy's is.
 *
 * Left out on purpose: everything that runs code or loads native code (Lua, OpenSSL engines
 * and providers, external checks, `program`, SPOE/OpenTracing/OpenTelemetry filters, the
 * insecure-* switches), changes the process (user, chroot, setenv, master-worker, setcap),
 * reads or writes files outside the configuration's directory (ca-base/crt-base, pidfile,
 * server state files, Unix sockets), opens a management interface (`stats socket`, peers,
 * `expose-fd`), or lets clients pick destinations (`option http_proxy`).
 */

/** An allowed setting and the number of values that follow it. */
export type Arity = Readonly<Record<string, number>>;

const words = (list: string): ReadonlySet<string> => new Set(list.trim().split(/\s+/));

/** Settings grouped by how many values follow them: `{ 0: 'ssl tfo', 1: 'crt alpn' }`. */
function arity(groups: Readonly<Record<number, string>>): Arity {
  return Object.fromEntries(
    Object.entries(groups).flatMap(([count, list]) =>
      [...words(list)].map((name) => [name, Number(count)] as const),
    ),
  );
}

/** Sections a configuration may open; `global` and the four proxy sections, plus: */
export const sectionKinds = {
  global: 'global',
  defaults: 'proxy',
  frontend: 'proxy',
  backend: 'proxy',
  listen: 'proxy',
  /** DNS resolution for server-template and FQDN servers. */
  resolvers: 'resolvers',
  /** Basic authentication users (`http-request auth`). */
  userlist: 'userlist',
  /** Named sets of error files (`errorfiles`, `http-request return errorfiles`). */
  'http-errors': 'http-errors',
  /** The HTTP cache `filter cache` and `cache-use`/`cache-store` refer to. */
  cache: 'cache',
} as const;

export type SectionKind = (typeof sectionKinds)[keyof typeof sectionKinds];

/** HAProxy's other sections (2.6 to 3.2): refused, and their lines with them. */
export const otherSections: ReadonlySet<string> = new Set([
  'peers',
  'mailers',
  'program',
  'ring',
  'fcgi-app',
  'crt-store',
  'traces',
  'log-forward',
  'acme',
]);

/** Keywords of each kind of section (the section's own name is handled apart). */
export const sectionKeywords: Readonly<Record<SectionKind, ReadonlySet<string>>> = {
  global: words(`
    default-path log log-send-hostname log-tag description node maxconn maxconnrate
    maxsessrate maxsslconn maxsslrate maxcomprate maxcompcpuusage maxpipes nbthread
    thread-groups ulimit-n hard-stop-after spread-checks max-spread-checks strict-limits
    pp2-never-send-local h2-workaround-bogus-websocket-clients stats
    ssl-default-bind-options ssl-default-bind-ciphers ssl-default-bind-ciphersuites
    ssl-default-bind-curves ssl-default-bind-sigalgs ssl-default-bind-client-sigalgs
    ssl-default-server-options ssl-default-server-ciphers ssl-default-server-ciphersuites
    ssl-default-server-curves ssl-default-server-sigalgs ssl-default-server-client-sigalgs
    ssl-server-verify ssl-dh-param-file ssl-load-extra-files ssl-load-extra-del-ext
    ssl-skip-self-issued-ca
    tune.bufsize tune.maxrewrite tune.http.maxhdr tune.http.cookielen tune.http.logurilen
    tune.ssl.default-dh-param tune.ssl.cachesize tune.ssl.lifetime tune.ssl.maxrecord
    tune.ssl.capture-buffer-size tune.ssl.ssl-ctx-cache-size tune.h2.header-table-size
    tune.h2.initial-window-size tune.h2.max-concurrent-streams tune.h2.max-frame-size
    tune.idletimer tune.maxaccept tune.maxpollevents tune.rcvbuf.client tune.rcvbuf.server
    tune.sndbuf.client tune.sndbuf.server tune.comp.maxlevel tune.pattern.cache-size
    tune.runqueue-depth tune.bufsize.small tune.vars.global-max-size tune.vars.proc-max-size
    tune.vars.reqres-max-size tune.vars.sess-max-size tune.vars.txn-max-size
  `),
  proxy: words(`
    acl balance bind capture compression cookie declare default-server default_backend
    description disabled dynamic-cookie-key enabled errorfile errorfiles errorloc errorloc302
    errorloc303 error-log-format filter force-persist fullconn guid hash-balance-factor
    hash-type http-after-response http-check http-error http-request http-response
    http-reuse http-send-name-header id ignore-persist log log-format log-format-sd log-tag
    max-keep-alive-queue max-session-srv-conns maxconn backlog mode monitor monitor-uri
    option persist rate-limit redirect retries retry-on server server-template stats
    stick stick-table tcp-check tcp-request tcp-response timeout unique-id-format
    unique-id-header use-server use_backend clitcpka-cnt clitcpka-idle clitcpka-intvl
    srvtcpka-cnt srvtcpka-idle srvtcpka-intvl
  `),
  resolvers: words(
    'nameserver parse-resolv-conf accepted_payload_size hold resolve_retries timeout',
  ),
  userlist: words('group user'),
  'http-errors': words('errorfile'),
  cache: words('total-max-size max-object-size max-age process-vary max-secondary-entries'),
};

/** Keywords HAProxy accepts after `no` or `default` that we allow (in proxies). */
export const prefixableKeywords: ReadonlySet<string> = words('option log');

/** `option` names. `external-check` runs programs, `http_proxy` lets clients pick servers. */
export const proxyOptions: ReadonlySet<string> = words(`
  abortonclose accept-invalid-http-request accept-invalid-http-response allbackups checkcache
  clitcpka contstats disable-h2-upgrade dontlog-normal dontlognull forwardfor forwarded
  h1-case-adjust-bogus-client h1-case-adjust-bogus-server http-buffer-request
  http-drop-request-trailers http-drop-response-trailers http-ignore-probes http-keep-alive
  http-no-delay http-pretend-keepalive http-restrict-req-hdr-names http-server-close
  http-use-proxy-header httpchk httpclose httplog idle-close-on-response independent-streams
  ldap-check log-health-checks log-separate-errors logasap mysql-check nolinger originalto
  persist pgsql-check prefer-last-server redispatch redis-check smtpchk socket-stats
  splice-auto splice-request splice-response srvtcpka ssl-hello-chk tcp-check
  tcp-smart-accept tcp-smart-connect tcpka tcplog transparent
`);

export const proxyModes: ReadonlySet<string> = words('http tcp');

/** `stats` settings: the statistics page of a proxy, and two global limits (no socket). */
export const statsSettings: Readonly<Record<'global' | 'proxy', ReadonlySet<string>>> = {
  global: words('timeout maxconn'),
  proxy: words(`
    enable uri realm auth refresh hide-version show-legends show-node show-desc scope
    http-request
  `),
};

/** Filters that only transform traffic inside HAProxy (no plugin, no external agent). */
export const filterKinds: ReadonlySet<string> = words('compression cache bwlim-in bwlim-out');

/** Services `use-service` may start: only the built-in Prometheus exporter (no Lua). */
export const services: ReadonlySet<string> = words('prometheus-exporter');

/** `timeout` names. */
export const timeoutNames: ReadonlySet<string> = words(`
  client client-fin connect http-request http-keep-alive queue server server-fin tarpit
  tunnel check client-hs resolve retry
`);

/** Rule keywords with a context word before the action (`tcp-request content accept`). */
export const ruleContexts: Readonly<Record<string, ReadonlySet<string>>> = {
  'tcp-request': words('connection session content'),
  'tcp-response': words('content'),
};

/** Rule keywords whose second word is a delay, not an action. */
export const ruleDelays: Readonly<Record<string, string>> = {
  'tcp-request': 'inspect-delay',
  'tcp-response': 'inspect-delay',
};

/*
 * Left out on purpose, though a template author might want them: `do-resolve` (DNS queries
 * from the data plane with request data in them), `set-dst` and `set-dst-port` (a request sent
 * to any address a header names), `stats admin` (servers switched through the stats page) and
 * `ocsp-update` (outbound fetches to the responders tenants' certificates name). Each reaches
 * past HAProxy itself; a template that needs one is a change to this allow-list.
 */
const sharedActions = `
  allow deny capture set-var set-var-fmt unset-var set-log-level set-nice set-tos set-mark
  track-sc0 track-sc1 track-sc2 sc-inc-gpc sc-inc-gpc0 sc-inc-gpc1 sc-set-gpt sc-set-gpt0
  sc-add-gpc set-priority-class set-priority-offset set-bandwidth-limit silent-drop
  set-fc-mark set-fc-tos set-bc-mark set-bc-tos
`;

/** Actions of each rule keyword (names before any `(`). */
export const ruleActions: Readonly<Record<string, ReadonlySet<string>>> = {
  'http-request': words(`${sharedActions}
    tarpit auth redirect return reject add-header set-header del-header replace-header
    replace-value early-hint set-method set-path set-pathq set-query set-uri replace-path
    replace-pathq replace-uri set-src set-src-port add-acl del-acl
    set-map del-map cache-use disable-l7-retry strict-mode wait-for-body wait-for-handshake
    set-timeout use-service normalize-uri set-retries
  `),
  'http-response': words(`${sharedActions}
    redirect return add-header set-header del-header replace-header replace-value
    set-status add-acl del-acl set-map del-map cache-store strict-mode wait-for-body
  `),
  'http-after-response': words(`${sharedActions}
    add-header set-header del-header replace-header replace-value set-status strict-mode
    set-map del-map add-acl del-acl
  `),
  'tcp-request': words(`${sharedActions}
    accept reject expect-proxy expect-netscaler-cip set-src set-src-port switch-mode
    use-service
  `),
  'tcp-response': words(`${sharedActions} accept reject close`),
  'http-check': words(`
    comment connect disable-on-404 expect send send-state set-var set-var-fmt unset-var
  `),
  'tcp-check': words(`
    comment connect expect send send-lf send-binary send-binary-lf set-var set-var-fmt
    unset-var
  `),
};

/** Actions whose word carries an argument in parentheses (`set-var(txn.x)`). */
export const parenthesisActions: ReadonlySet<string> = words(`
  set-var set-var-fmt unset-var add-acl del-acl set-map del-map sc-inc-gpc
  sc-inc-gpc0 sc-inc-gpc1 sc-set-gpt sc-set-gpt0 sc-add-gpc
`);

/** Actions whose parenthesised argument names a pattern file (`set-map(maps/x.map)`). */
export const fileParenthesisActions: ReadonlySet<string> = words('add-acl del-acl set-map del-map');

/** Settings of a `bind` line and how many values each takes (HAProxy's bind_kws tables). */
export const bindSettings = arity({
  0: `
    ssl strict-sni no-sslv3 no-tlsv10 no-tlsv11 no-tlsv12 no-tlsv13 force-tlsv12 force-tlsv13
    no-tls-tickets prefer-client-ciphers allow-0rtt no-ca-names accept-proxy defer-accept tfo
    v4v6 v6only
  `,
  1: `
    crt crt-list ca-file ca-verify-file crl-file tls-ticket-keys alpn npn ciphers ciphersuites
    curves ecdhe sigalgs client-sigalgs ssl-min-ver ssl-max-ver verify ca-ignore-err
    crt-ignore-err accept-netscaler-cip backlog maxconn name id nice proto thread shards mss
    tcp-ut interface
  `,
});

/** Settings of `server`, `server-template` and `default-server` (HAProxy's srv_kws tables). */
export const serverSettings = arity({
  0: `
    check no-check backup no-backup disabled enabled ssl no-ssl check-ssl no-check-ssl
    send-proxy no-send-proxy send-proxy-v2 no-send-proxy-v2 send-proxy-v2-ssl
    no-send-proxy-v2-ssl send-proxy-v2-ssl-cn no-send-proxy-v2-ssl-cn check-send-proxy
    no-check-send-proxy agent-check no-agent-check tfo no-tfo stick non-stick ssl-reuse
    no-ssl-reuse tls-tickets no-tls-tickets allow-0rtt no-sslv3 no-tlsv10 no-tlsv11 no-tlsv12
    no-tlsv13 force-tlsv12 force-tlsv13
  `,
  1: `
    addr port inter fastinter downinter rise fall weight maxconn maxqueue minconn max-reuse
    cookie id init-addr resolvers resolve-prefer resolve-net resolve-opts slowstart observe
    on-error on-marked-down on-marked-up error-limit pool-low-conn pool-max-conn
    pool-purge-delay proto alpn npn check-alpn check-sni check-proto sni verify verifyhost
    ciphers ciphersuites ssl-min-ver ssl-max-ver crt ca-file crl-file agent-addr agent-port
    agent-inter agent-send track proxy-v2-options ws redir tcp-ut
  `,
});

/** Settings inside `[...]` of a crt-list line (HAProxy's ssl_bind_kws table). */
export const crtListSettings = arity({
  0: `
    allow-0rtt no-ca-names
  `,
  1: `
    alpn npn ca-file ca-verify-file crl-file ciphers ciphersuites curves ecdhe sigalgs
    client-sigalgs ssl-min-ver ssl-max-ver verify
  `,
});

/**
 * Words whose next word names a file HAProxy opens while parsing: bind/server/crt-list
 * settings, `http-request return|deny ... file|lf-file|errorfile`, `http-error`, ACL `-f`.
 */
export const fileArgumentWords: ReadonlySet<string> = words(`
  file lf-file errorfile crt crt-list ca-file ca-verify-file crl-file tls-ticket-keys -f
  ssl-dh-param-file
`);

/** Words whose next word is a network address (health-check and agent addresses). */
export const addressArgumentWords: ReadonlySet<string> = words('addr agent-addr');

/** Address prefixes allowed in front of `host:port` (TCP and UDP over IP only). */
export const addressPrefixes: ReadonlySet<string> = words(`
  ipv4@ ipv6@ tcp@ tcp4@ tcp6@ udp@ udp4@ udp6@
`);

/** `log` targets besides network addresses. */
export const logTargets: ReadonlySet<string> = words('global stdout stderr');

/**
 * Environment variables a configuration may read. The chart's default template puts
 * HAPTIC_LISTEN_ADDRESS in front of its ports (empty in a Pod, a loopback address when
 * replicas share a host); nothing else of HAProxy's environment may reach the configuration.
 */
export const allowedEnvironment: ReadonlySet<string> = words('HAPTIC_LISTEN_ADDRESS');

/** Configuration macros HAProxy evaluates; `.notice` and friends would print values. */
export const conditionalMacros: ReadonlySet<string> = words('.if .elif .else .endif');

/** A table's own entry for `key` (never one inherited from Object.prototype). */
export function entryOf<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
