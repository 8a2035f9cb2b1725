import { describe, expect, it } from 'vitest';
import { parseServerStates, serverStateMismatch } from './server-state.ts';

// `show servers state be:a:80` from HAProxy 2.6 after `set server … state ready` on s2.
const answer = [
  '1',
  '# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr srv_agent_addr srv_agent_port',
  '2 be:a:80 1 s1 127.0.0.1 0 5 1 1 3 1 0 0 8 0 0 0 - 1 - 0 0 - - 0',
  '2 be:a:80 2 s2 fd00::1 2 4 1 1 0 1 0 0 8 0 0 0 - 19002 - 0 0 - - 0',
  '',
].join('\n');

describe('parseServerStates', () => {
  it('reads address, port and forced maintenance by backend/server', () => {
    expect(parseServerStates(`${answer}\nCan't find backend.\n`)).toEqual(
      new Map([
        ['be:a:80/s1', { address: '127.0.0.1', port: 1, maint: true }],
        ['be:a:80/s2', { address: 'fd00::1', port: 19002, maint: false }],
      ]),
    );
  });
});

describe('serverStateMismatch', () => {
  const states = parseServerStates(answer);

  it('accepts a change in force, IPv6 written another way', () => {
    expect(
      serverStateMismatch(states, {
        backend: 'be:a:80',
        server: 's2',
        address: 'FD00:0::1',
        port: 19002,
        state: 'ready',
      }),
    ).toBeUndefined();
  });

  it.each([
    [
      { server: 's2', address: 'fd00::1', port: 19002, state: 'maint' as const },
      'the server be:a:80/s2 is fd00::1:19002 ready, not fd00::1:19002 maint',
    ],
    [
      { server: 's1', address: '127.0.0.1', port: 2, state: 'maint' as const },
      'the server be:a:80/s1 is 127.0.0.1:1 maint, not 127.0.0.1:2 maint',
    ],
    [
      { server: 's9', address: '127.0.0.1', port: 1, state: 'maint' as const },
      'HAProxy does not list the server be:a:80/s9',
    ],
  ])('names what differs: %j', (change, message) => {
    expect(serverStateMismatch(states, { backend: 'be:a:80', ...change })).toBe(message);
  });
});
