import { describe, expect, it } from 'vitest';
import { reduceHaproxyMessage } from '../../haproxy/message.ts';
import { checkFailureLocations } from './check-failure-locations.ts';

// Alerts as HAProxy 2.6 writes them, from real `haproxy -c` runs, reduced as the check reduces
// them before anything else reads them.
const config = [
  'global',
  '  default-path config',
  'defaults',
  '  mode http',
  'frontend http',
  '  bind :8080',
  '  bind :8443 ssl crt-list ssl/certificates.list',
  '  http-request set-var(txn.b) path,map_reg(maps/r.map)',
  'backend a',
  '  timeout server 5parsecs',
  '',
].join('\n');
const read = (raw: string) => checkFailureLocations(reduceHaproxyMessage(raw, { config }));

describe('checkFailureLocations', () => {
  it('reads a line of haproxy.cfg with the reduced reason, nothing quoted from HAProxy', () => {
    const [location] = read(
      "[ALERT]    (1) : config : parsing [haproxy.cfg:10] : unexpected character 'p' in 'timeout server'",
    );
    expect(location).toMatchObject({ file: 'haproxy.cfg', line: 10 });
    expect(location?.reason).not.toContain("'p'");
  });

  it('reads the crt-list line inside the bind line that loads it', () => {
    expect(
      read(
        "[ALERT]    (1) : config : parsing [haproxy.cfg:7] : 'bind :8443' in section 'frontend' : 'crt-list' : error processing line 2 in file 'ssl/certificates.list' : unable to load SSL certificate into SSL Context 'ssl/app_weak.pem'.",
      ),
    ).toEqual([expect.objectContaining({ file: 'ssl/certificates.list', line: 2 })]);
  });

  it('reads the map line inside the rule that loads it', () => {
    expect(
      read(
        "[ALERT]    (1) : config : parsing [haproxy.cfg:8] : error detected in frontend 'http' while parsing 'http-request set-var(txn.b)' rule : invalid args in converter 'map_reg' : regex '(bad' is invalid (error=missing closing parenthesis, erroffset=4) at line 2 of file 'maps/r.map'.",
      ),
    ).toEqual([expect.objectContaining({ file: 'maps/r.map', line: 2 })]);
  });

  it('reads one location per alert, and none from warnings or alerts without a line', () => {
    const message = [
      '[WARNING]  (1) : config : parsing [haproxy.cfg:4] : a warning is not a failure',
      "[ALERT]    (1) : config : parsing [haproxy.cfg:6] : unknown keyword 'bogus' in 'frontend' section",
      "[ALERT]    (1) : config : parsing [haproxy.cfg:10] : unknown keyword 'bogus' in 'backend' section",
      '[ALERT]    (1) : config : Error(s) found in configuration file : haproxy.cfg',
      '[ALERT]    (1) : config : Fatal errors found in configuration.',
    ].join('\n');
    expect(read(message).map((location) => location.line)).toEqual([6, 10]);
  });
});
