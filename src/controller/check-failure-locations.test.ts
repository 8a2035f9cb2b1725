import { describe, expect, it } from 'vitest';
import { checkFailureLocations } from './check-failure-locations.ts';

// Alerts as HAProxy 2.6 writes them (after the PID is dropped), from real `haproxy -c` runs.
describe('checkFailureLocations', () => {
  it.each([
    [
      'a line of haproxy.cfg, with the reason after its prefixes',
      "[ALERT] config : parsing [haproxy.cfg:13] : unexpected character 'p' in 'timeout server'",
      { file: 'haproxy.cfg', line: 13, reason: "unexpected character 'p' in 'timeout server'" },
    ],
    [
      'the crt-list line inside the bind line that loads it',
      "[ALERT] config : parsing [haproxy.cfg:10] : 'bind 127.0.0.1:18443' in section 'frontend' : 'crt-list' : error processing line 2 in file 'ssl/certificates.list' : unable to load SSL certificate into SSL Context 'ssl/app_weak.pem'.",
      {
        file: 'ssl/certificates.list',
        line: 2,
        reason: "unable to load SSL certificate into SSL Context 'ssl/app_weak.pem'.",
        quoted: [
          'bind 127.0.0.1:18443',
          'frontend',
          'crt-list',
          'ssl/certificates.list',
          'ssl/app_weak.pem',
        ],
      },
    ],
    [
      'the map line inside the rule that loads it',
      "[ALERT] config : parsing [haproxy.cfg:10] : error detected in frontend 'http' while parsing 'http-request set-var(txn.b)' rule : invalid args in converter 'map_reg' : regex '(bad' is invalid (error=missing closing parenthesis, erroffset=4) at line 2 of file 'maps/r.map'.",
      { file: 'maps/r.map', line: 2 },
    ],
    [
      'a duplicate section, whose prefix has no spaced colon',
      "[ALERT] config : Parsing [haproxy.cfg:17]: backend 'a' has the same name as backend 'a' declared at haproxy.cfg:15.",
      {
        file: 'haproxy.cfg',
        line: 17,
        reason: "backend 'a' has the same name as backend 'a' declared at haproxy.cfg:15.",
      },
    ],
  ])('reads %s', (_what, message, expected) => {
    expect(checkFailureLocations(message)).toEqual([expect.objectContaining(expected)]);
  });

  it('reads one location per alert, and none from warnings or alerts without a line', () => {
    const message = [
      '[WARNING] config : parsing [haproxy.cfg:4] : a warning is not a failure',
      "[ALERT] config : parsing [haproxy.cfg:20] : unknown keyword 'bogus' in 'backend' section",
      "[ALERT] config : parsing [haproxy.cfg:31] : unknown keyword 'bogus' in 'backend' section",
      '[ALERT] config : Error(s) found in configuration file : haproxy.cfg',
      '[ALERT] config : Fatal errors found in configuration.',
    ].join('\n');
    expect(checkFailureLocations(message).map((location) => location.line)).toEqual([20, 31]);
  });
});
