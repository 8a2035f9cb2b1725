import { describe, expect, it } from 'vitest';
import { reduceHaproxyMessage } from '../../../src/haproxy/message.ts';

const config = `global
  default-path config
defaults
  mode http
frontend fe
  bind 127.0.0.1:0
  acl x src -f secret.txt
  http-request set-var(txn.x) req.hdr(x),map_ip(secret.txt)
  errorfile 503 secret.txt
  no option httpclose
backend b
  balance bogus
  server s1 nosuchhost.invalid:80
  timeout server abc
  http-request deny deny_status 999
`;

/** HAProxy 2.6.12's own output for this configuration (pids kept, as haproxy -c prints them). */
const output = `[NOTICE]   (15956) : haproxy version is 2.6.12-1+deb12u4
[NOTICE]   (15956) : path to executable is /usr/sbin/haproxy
[ALERT]    (15956) : config : parsing [/tmp/x/haproxy.cfg:6] : 'bind' : invalid port '0'
[ALERT]    (15956) : config : parsing [/tmp/x/haproxy.cfg:7] : error detected while parsing ACL 'x' : 'TOPSECRET-LINE hunter2' is not a valid IPv4 or IPv6 address at line 1 of file 'secret.txt'.
[ALERT]    (15956) : config : parsing [/tmp/x/haproxy.cfg:8] : error detected in frontend 'fe' while parsing 'http-request set-var(txn.x)' rule : invalid args in converter 'map_ip' : 'root:x:0:0:root:/root:/bin/bash' is not a valid IPv4 or IPv6 address at line 1 of file '/etc/passwd'.
[ALERT]    (15956) : config : parsing [/tmp/x/haproxy.cfg:9] : errorfile : 'secret.txt': unable to parse headers (error offset: 9)
[ALERT]    (15956) : config : parsing [/tmp/x/haproxy.cfg:12] : balance only supports 'roundrobin', 'static-rr', 'leastconn', 'source', 'uri', 'url_param', 'hdr(name)' and 'rdp-cookie(name)' options.
[ALERT]    (15956) : config : [/tmp/x/haproxy.cfg:13] : 'server b/s1' : could not resolve address 'nosuchhost.invalid'.
[ALERT]    (15956) : config : parsing [/tmp/x/haproxy.cfg:14] : unexpected character 'a' in 'timeout server'
[ALERT]    (15956) : config : parsing [/tmp/x/haproxy.cfg:15] : error detected in backend 'b' while parsing 'http-request deny' rule : Unexpected status code '999'.
[WARNING]  (15956) : config : parsing [/tmp/x/haproxy.cfg:10] : 'option httpclose' something TOPSECRET-LINE.
[ALERT]    (15956) : config : Proxy 'fe': unable to find required use_backend: 'TOPSECRET-LINE'.
[ALERT]    (15956) : config : Failed to initialize server(s) addr.
[ALERT]    (15956) : config : Error(s) found in configuration file : /tmp/x/haproxy.cfg
[ALERT]    (15956) : config : Fatal errors found in configuration.`;

describe("reducing HAProxy's messages to keyword, line and a fixed reason", () => {
  const reducedOutput = reduceHaproxyMessage(output, { config });

  it('gives one line per located message, with the keyword read from the configuration', () => {
    expect(reducedOutput.split('\n')).toEqual([
      "[ALERT] haproxy.cfg:6: 'bind' has an invalid address or port",
      "[ALERT] haproxy.cfg:7: 'acl' has an invalid ACL: its criterion, flags, patterns or pattern file (in secret.txt:1)",
      "[ALERT] haproxy.cfg:8: 'http-request set-var' has an invalid converter or converter argument (such as a map file HAProxy cannot read)",
      "[ALERT] haproxy.cfg:9: 'errorfile' names an error file that is not a valid HTTP response",
      "[ALERT] haproxy.cfg:12: 'balance' names a load-balancing algorithm HAProxy does not support",
      "[ALERT] haproxy.cfg:13: 'server' names a host that does not resolve (init-addr libc,none starts it disabled instead)",
      "[ALERT] haproxy.cfg:14: 'timeout server' has an invalid time value (a number with a unit, such as 5s)",
      "[ALERT] haproxy.cfg:15: 'http-request deny' has an invalid HTTP status code",
      "[WARNING] haproxy.cfg:10: 'no option httpclose' is invalid for HAProxy (its details are withheld because they may quote file contents)",
      '[ALERT] haproxy.cfg: a use_backend rule names a backend that does not exist',
    ]);
  });

  it('never carries quoted file contents, paths or names from HAProxy', () => {
    for (const leak of [
      'TOPSECRET',
      'hunter2',
      'root:x',
      '/etc/passwd',
      '/tmp/x',
      'nosuchhost',
      '15956',
    ]) {
      expect(reducedOutput).not.toContain(leak);
    }
  });

  it('gives the same text when reduced again', () => {
    expect(reduceHaproxyMessage(reducedOutput, { config })).toBe(reducedOutput);
  });

  it("accepts the agent's cleaned form (no pids)", () => {
    const cleaned =
      "[ALERT] config : parsing [/x/haproxy.cfg:12] : balance only supports 'roundrobin'.";
    expect(reduceHaproxyMessage(cleaned, { config })).toBe(
      "[ALERT] haproxy.cfg:12: 'balance' names a load-balancing algorithm HAProxy does not support",
    );
  });

  it('adds the line of a crt-list or map file the line loads, when it is in the directory', () => {
    const nested = `[ALERT]    (1) : config : parsing [/x/haproxy.cfg:6] : 'bind 127.0.0.1:0' in section 'frontend' : 'crt-list' : error processing line 2 in file 'ssl/certificates.list' : unable to load SSL certificate into SSL Context 'ssl/app_weak.pem'.
[ALERT]    (1) : config : parsing [/x/haproxy.cfg:7] : error detected while parsing ACL 'x' : 'TOPSECRET' is not a valid IPv4 or IPv6 address at line 1 of file '/etc/passwd'.`;
    const result = reduceHaproxyMessage(nested, { config });
    expect(result.split('\n')).toEqual([
      "[ALERT] haproxy.cfg:6: 'bind' cannot load a certificate, key or crt-list it names (in ssl/certificates.list:2)",
      "[ALERT] haproxy.cfg:7: 'acl' has an invalid ACL: its criterion, flags, patterns or pattern file",
    ]);
    expect(reduceHaproxyMessage(result, { config })).toBe(result);
  });

  it('names another file by its relative path, and an absolute one not at all', () => {
    const other = `[ALERT] (1) : config : parsing [ssl/list.txt:3] : unable to load SSL certificate
[ALERT] (1) : config : parsing [/etc/shadow:1] : unknown keyword 'x' in 'global' section`;
    expect(reduceHaproxyMessage(other, { config }).split('\n')).toEqual([
      '[ALERT] ssl/list.txt:3: cannot load a certificate, key or crt-list it names',
      '[ALERT] haproxy.cfg: is not a keyword HAProxy knows in this section',
    ]);
  });

  it('says the configuration was rejected when no alert can be shown', () => {
    expect(reduceHaproxyMessage('[ALERT] (1) : something quoting TOPSECRET', { config })).toBe(
      '[ALERT] haproxy.cfg: HAProxy rejected the configuration (details withheld because they may quote file contents)',
    );
  });

  it('keeps a forged reduced line only with a known reason', () => {
    expect(reduceHaproxyMessage("[ALERT] haproxy.cfg:1: 'x' TOPSECRET", { config })).not.toContain(
      'TOPSECRET',
    );
  });

  it('is empty for a valid configuration', () => {
    expect(reduceHaproxyMessage('Configuration file is valid\n', { config })).toBe('');
  });
});
