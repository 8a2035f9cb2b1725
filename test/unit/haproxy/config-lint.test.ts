import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { inspectCrtList } from '../../../src/haproxy/crt-list-lint.ts';
import {
  haproxyLintReasons as reasons,
  inspectHaproxyConfig,
} from '../../../src/haproxy/config-lint.ts';

const head = `global
  default-path config
  log stderr format raw local0
defaults
  mode http
  timeout client 5s
  timeout connect 5s
  timeout server 5s
frontend fe
  bind :8080
`;
/** The first finding of `lines` appended to a frontend (line 9 onwards). */
const inFrontend = (lines: string) => inspectHaproxyConfig(`${head}${lines}\n`).findings;

const production = readFileSync(
  join(projectRoot, 'test/fixtures/haproxy-production/haproxy.cfg'),
  'utf8',
);

describe('the HAProxy configuration allow-list accepts', () => {
  it('a production ingress configuration: TLS, maps, ACL files, checks, stats page, cache', () => {
    expect(inspectHaproxyConfig(production).findings).toEqual([]);
  });

  it('lists the backends and crt-lists it declares', () => {
    const inspection = inspectHaproxyConfig(`${production}backend "quoted"\n`);
    expect(inspection.backends).toEqual(['be', 'stats', 'quoted']);
    expect(inspection.crtLists).toEqual(['ssl/certificates.list']);
  });

  it.each([
    ['text that only mentions lua-load', '  http-request set-header X-Note "lua-load is text"'],
    ['a commented-out directive', '  # lua-load /tmp/x.lua'],
    ['a CR that ends the line before a directive', '  http-request set-header x y\r lua-load x'],
    ['a map file in a subdirectory', '  http-request set-var(txn.x) str(a),map(maps/a/b.map,def)'],
    // Addresses HAProxy resolves while parsing: IP addresses, no host or `*` (issue 30 §4).
    ['a bind on an IPv4, an IPv6 and any address', '  bind 10.0.0.1:80,ipv6@::1:81,*:82,:83'],
    ['a log target by IP address', '  log udp@10.0.0.1:514 local0'],
    ['a health-check address by IP address', '  http-check connect addr 10.0.0.1 port 81'],
    // A server's host name is left to the serving HAProxy (init-addr, resolvers).
    ['a server named by host', 'backend b\n  server s app.example:80 init-addr last,none'],
  ])('%s', (_name, lines) => {
    expect(inFrontend(lines)).toEqual([]);
  });
});

describe('the HAProxy configuration allow-list refuses', () => {
  it.each([
    [
      'lua-load after a vertical tab (issue 12 §1)',
      '\vlua-load files/x.lua',
      'lua-load',
      reasons.KeywordNotAllowed,
    ],
    [
      'lua-load after a form feed (issue 12 §1)',
      '\flua-load files/x.lua',
      'lua-load',
      reasons.KeywordNotAllowed,
    ],
    [
      'no lua-load, which HAProxy runs before failing (§2)',
      '  no lua-load x.lua',
      'no lua-load',
      reasons.KeywordNotAllowed,
    ],
    [
      'no lua-load-per-thread (§2)',
      '  no lua-load-per-thread x.lua',
      'no lua-load-per-thread',
      reasons.KeywordNotAllowed,
    ],
    ['default lua-load', '  default lua-load x.lua', 'default lua-load', reasons.KeywordNotAllowed],
    [
      'no before an allowed keyword other than option and log',
      '  no bind :1',
      'no bind',
      reasons.KeywordNotAllowed,
    ],
    [
      'an ACL reading /etc/passwd (§4)',
      '  acl x src -f /etc/passwd',
      '-f /etc/passwd',
      reasons.FileOutsideDirectory,
    ],
    [
      'a return serving a file by absolute path (§5)',
      '  http-request return status 200 content-type text/plain file /etc/ssl/key.pem',
      'file /etc/ssl/key.pem',
      reasons.FileOutsideDirectory,
    ],
    [
      'an errorfile directive naming a file by absolute path',
      '  errorfile 503 /etc/haptic/agent-tls/tls.key',
      'errorfile /etc/haptic/agent-tls/tls.key',
      reasons.FileOutsideDirectory,
    ],
    [
      'an errorfile directive leaving the directory with ..',
      '  errorfile 404 ../secret.http',
      'errorfile ../secret.http',
      reasons.FileOutsideDirectory,
    ],
    [
      'a return serving an errorfile by absolute path',
      '  http-request return status 503 errorfile /etc/passwd',
      'errorfile /etc/passwd',
      reasons.FileOutsideDirectory,
    ],
    [
      'a return serving a file with ..',
      '  http-request return status 200 lf-file ../agent-tls/tls.key',
      'lf-file ../agent-tls/tls.key',
      reasons.FileOutsideDirectory,
    ],
    [
      'the environment in a response (§5)',
      '  http-request return status 200 content-type text/plain lf-string "%[env(SECRET)]"',
      'env()',
      reasons.FetchNotAllowed,
    ],
    [
      'env() in a header',
      '  http-request set-header X %[env(HOME)]',
      'env()',
      reasons.FetchNotAllowed,
    ],
    [
      'a map converter reading /etc/passwd',
      '  http-request set-var(txn.x) src,map_ip(/etc/passwd)',
      'map /etc/passwd',
      reasons.FileOutsideDirectory,
    ],
    [
      'set-map on a file outside the directory',
      '  http-request set-map(/tmp/x.map) a b',
      'map /tmp/x.map',
      reasons.FileOutsideDirectory,
    ],
    [
      'use-service with Lua',
      '  http-request use-service lua.x',
      'http-request use-service lua.x',
      reasons.KeywordNotAllowed,
    ],
    ['a Lua action', '  http-request lua.x', 'http-request lua.x', reasons.KeywordNotAllowed],
    [
      'send-spoe-group',
      '  http-request send-spoe-group a b',
      'http-request send-spoe-group',
      reasons.KeywordNotAllowed,
    ],
    [
      'an unknown action',
      '  tcp-request content bogus',
      'tcp-request bogus',
      reasons.KeywordNotAllowed,
    ],
    [
      'a SPOE filter',
      '  filter spoe engine x config x.conf',
      'filter spoe',
      reasons.KeywordNotAllowed,
    ],
    [
      'an OpenTracing filter (loads plugins)',
      '  filter opentracing config ot.cfg',
      'filter opentracing',
      reasons.KeywordNotAllowed,
    ],
    [
      'option external-check',
      '  option external-check',
      'option external-check',
      reasons.KeywordNotAllowed,
    ],
    [
      'no option external-check',
      '  no option external-check',
      'option external-check',
      reasons.KeywordNotAllowed,
    ],
    ['option http_proxy', '  option http_proxy', 'option http_proxy', reasons.KeywordNotAllowed],
    [
      'external-check command',
      '  external-check command /bin/sh',
      'external-check',
      reasons.KeywordNotAllowed,
    ],
    [
      'a bind on a Unix socket',
      '  bind /var/run/x.sock',
      'bind /var/run/x.sock',
      reasons.AddressNotAllowed,
    ],
    ['a bind on an inherited descriptor', '  bind fd@3', 'bind fd@3', reasons.AddressNotAllowed],
    [
      'a bind setting HAProxy matches before its parenthesis',
      '  bind :8443 ssl crt(x) /etc/key.pem',
      'bind crt(x)',
      reasons.KeywordNotAllowed,
    ],
    [
      'a bind exposing listener descriptors',
      '  bind :1 expose-fd listeners',
      'bind expose-fd',
      reasons.KeywordNotAllowed,
    ],
    [
      'a bind crt outside the directory',
      '  bind :8443 ssl crt /etc/haptic/agent-tls/tls.crt',
      'crt /etc/haptic/agent-tls/tls.crt',
      reasons.FileOutsideDirectory,
    ],
    [
      'a server on the Docker socket',
      '  server s unix@/var/run/docker.sock',
      'server unix@/var/run/docker.sock',
      reasons.AddressNotAllowed,
    ],
    [
      'a server address from the environment',
      '  server s $SECRET:80',
      'server $SECRET:80',
      reasons.AddressNotAllowed,
    ],
    [
      'a server setting with a variable number of values',
      '  server s 10.0.0.1:80 source 1.2.3.4',
      'server source',
      reasons.KeywordNotAllowed,
    ],
    [
      'a health-check address on a Unix socket',
      '  http-check connect addr /tmp/s',
      'addr /tmp/s',
      reasons.AddressNotAllowed,
    ],
    [
      'a keyword from the environment',
      '  "${HAPTIC_LISTEN_ADDRESS}x" a',
      '${HAPTIC_LISTEN_ADDRESS}x',
      reasons.KeywordFromEnvironment,
    ],
    [
      'a variable outside the allow-list',
      '  bind "${SECRET}:80"',
      '${SECRET}',
      reasons.EnvironmentNotAllowed,
    ],
    [
      'an allowed variable alone in its word',
      '  bind "${HAPTIC_LISTEN_ADDRESS}"',
      '${HAPTIC_LISTEN_ADDRESS}',
      reasons.EnvironmentNotAllowed,
    ],
    [
      'an allowed variable with a default',
      '  bind "${HAPTIC_LISTEN_ADDRESS-1.2.3.4}:80"',
      '${HAPTIC_LISTEN_ADDRESS}',
      reasons.EnvironmentNotAllowed,
    ],
    [
      'an allowed variable split into words',
      '  bind "${HAPTIC_LISTEN_ADDRESS[*]}:80"',
      '${HAPTIC_LISTEN_ADDRESS}',
      reasons.EnvironmentNotAllowed,
    ],
    [
      'an internal variable',
      '  http-request set-header x "$.FILE:"',
      '${.FILE}',
      reasons.EnvironmentNotAllowed,
    ],
    [
      'an option from the environment',
      '  option "${HAPTIC_LISTEN_ADDRESS}x"',
      'option ${HAPTIC_LISTEN_ADDRESS}x',
      reasons.KeywordFromEnvironment,
    ],
    [
      'an upper-case keyword (HAProxy does not know it)',
      '  LUA-LOAD x',
      'LUA-LOAD',
      reasons.KeywordNotAllowed,
    ],
    ['an escaped keyword', '  lua\\x2dload x', 'lua-load', reasons.KeywordNotAllowed],
    ['a keyword split by quotes', '  lua-"load" x', 'lua-load', reasons.KeywordNotAllowed],
    ['an escaped NUL', '  http-request return file\\x00 x', 'NUL', reasons.NulByte],
    ['an empty first word', '  "" lua-load x', '', reasons.KeywordNotAllowed],
    [
      'an unreadable line',
      '  http-request set-header x "y',
      'http-request',
      reasons.LineUnreadable,
    ],
    ['a scope line', '[scope]', '[', reasons.ScopeLine],
    ['.notice, which prints its argument', '.notice hello', '.notice', reasons.KeywordNotAllowed],
    [
      'a section opened inside .if',
      '.if 1\nbackend b\n.endif',
      'backend',
      reasons.SectionInConditional,
    ],
    [
      'a directive inside a false .if block',
      '.if 0\n  lua-load x.lua\n.endif',
      'lua-load',
      reasons.KeywordNotAllowed,
    ],
    ['an unknown keyword', '  bogus-directive on', 'bogus-directive', reasons.KeywordNotAllowed],
    // Names HAProxy resolves while the configuration is checked, where there is no network
    // (issue 30 §4).
    [
      'a bind on a host name',
      '  bind web.example:80',
      'bind web.example:80',
      reasons.AddressNotAllowed,
    ],
    [
      'a log target named by host',
      '  log udp@logs.example:514 local0',
      'log udp@logs.example:514',
      reasons.AddressNotAllowed,
    ],
    [
      'a server health-check address named by host',
      'backend b\n  server s 10.0.0.1:80 check addr probe.example',
      'addr probe.example',
      reasons.AddressNotAllowed,
    ],
    [
      'a server agent address named by host',
      'backend b\n  server s 10.0.0.1:80 agent-check agent-addr agent.example agent-port 1',
      'agent-addr agent.example',
      reasons.AddressNotAllowed,
    ],
    [
      'a health-check connection to a host name',
      '  http-check connect addr probe.example port 80',
      'addr probe.example',
      reasons.AddressNotAllowed,
    ],
    [
      'a nameserver named by host',
      'resolvers dns\n  nameserver ns1 dns.example:53',
      'nameserver dns.example:53',
      reasons.AddressNotAllowed,
    ],
  ])('%s', (_name, lines, directive, reason) => {
    const [finding] = inFrontend(lines);
    expect(finding).toMatchObject({ directive, reason });
    expect(finding?.message).toMatch(/^line \d+: ".*" .+; .+\.$/);
  });

  it.each([
    [
      'stats socket (§5)',
      'global\n  stats socket ipv4@127.0.0.1:19999 level admin',
      'stats socket',
    ],
    ['ssl-engine', 'global\n  ssl-engine rdrand', 'ssl-engine'],
    ['ssl-provider', 'global\n  ssl-provider legacy', 'ssl-provider'],
    ['insecure-fork-wanted', 'global\n  insecure-fork-wanted', 'insecure-fork-wanted'],
    ['setenv', 'global\n  setenv LD_PRELOAD /tmp/x.so', 'setenv'],
    ['presetenv', 'global\n  presetenv A b', 'presetenv'],
    ['master-worker', 'global\n  master-worker', 'master-worker'],
    ['chroot', 'global\n  chroot /', 'chroot'],
    ['ca-base', 'global\n  ca-base /etc/ssl', 'ca-base'],
    ['default-path other than config', 'global\n  default-path origin /etc', 'default-path origin'],
    ['a program section', 'program evil\n  command /bin/sh -c id', 'program'],
    ['a peers section', 'peers p\n  peer a 10.0.0.1:1', 'peers'],
    ['a keyword outside any section', 'maxconn 1', 'maxconn'],
    ['a proxy keyword in global', 'global\n  balance roundrobin', 'balance'],
  ])('%s', (_name, config, directive) => {
    expect(inspectHaproxyConfig(`${config}\n`).findings[0]?.directive).toBe(directive);
  });

  it('refuses relative files before default-path config anchors them', () => {
    const [finding] = inspectHaproxyConfig('frontend fe\n  acl x src -f maps/a.acl\n').findings;
    expect(finding).toMatchObject({ line: 2, reason: reasons.DefaultPathMissing });
  });

  it('does not take default-path config inside an .if block as anchoring paths', () => {
    const config =
      'global\n.if 0\n  default-path config\n.endif\nfrontend fe\n  acl x src -f a.acl\n';
    expect(inspectHaproxyConfig(config).findings[0]?.reason).toBe(reasons.DefaultPathMissing);
  });

  it('refuses every line of a refused section, and reports every refused line', () => {
    const findings = inspectHaproxyConfig(
      'global\n  lua-load /a\n  ssl-engine x\nring r\n  size 1\n',
    ).findings;
    expect(findings.map((finding) => finding.line)).toEqual([2, 3, 4, 5]);
  });

  it('refuses a NUL byte in the file', () => {
    expect(inspectHaproxyConfig('global\n\0lua-load /a')).toMatchObject({
      findings: [{ line: 2, directive: 'NUL', reason: reasons.NulByte }],
    });
  });

  it('shows control bytes of a directive as \\xHH', () => {
    expect(inFrontend('  bogus\\x0bword')[0]?.message).toContain('"bogus\\x0bword"');
  });
});

describe('what a template author is not trusted with', () => {
  it.each([
    [
      'do-resolve: DNS queries from the data plane',
      'http-request do-resolve(txn.ip,dns) hdr(x)',
      'http-request do-resolve(txn.ip,dns)',
    ],
    [
      'set-dst: a request sent where a header says',
      'http-request set-dst hdr(x-target)',
      'http-request set-dst',
    ],
    ['set-dst-port', 'http-request set-dst-port hdr(x-port)', 'http-request set-dst-port'],
    ['tcp-request set-dst', 'tcp-request connection set-dst src', 'tcp-request set-dst'],
    ['stats admin: servers switched from the stats page', 'stats admin if TRUE', 'stats admin'],
  ])('refuses %s, naming the line and the directive', (_, line, directive) => {
    expect(inFrontend(`  ${line}`)).toEqual([
      {
        line: 11,
        directive,
        reason: reasons.KeywordNotAllowed,
        message: `line 11: "${directive}" is not on the list of what haptic allows here; remove it from the template, or ask for it to be added to the allow-list if a template needs it.`,
      },
    ]);
  });

  it('refuses ocsp-update in a crt-list line (outbound fetches to the responders certificates name)', () => {
    const findings = inspectCrtList('ssl/a.pem [ocsp-update on] a.example.com\n');
    expect(findings.map((finding) => finding.line)).toEqual([1]);
    expect(findings[0]?.message).toContain('ocsp-update');
  });

  it('still allows remote log targets given as addresses (an operator ships logs)', () => {
    expect(inFrontend('  log 192.0.2.10:514 local0')).toEqual([]);
  });
});
