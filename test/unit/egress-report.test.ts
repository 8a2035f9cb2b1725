import { describe, expect, it } from 'vitest';
import {
  describeEgress,
  guardChainIds,
  parseRecentList,
  parseRuleCounter,
} from '../../dev/lib/egress-guard.ts';

describe('egress guard report', () => {
  it('reads every destination of an xt_recent list', () => {
    const list =
      'src=10.242.255.2 ttl: 64 last_seen: 4294921744 oldest_pkt: 1 4294921744\n' +
      'src=2001:db8::7 ttl: 64 last_seen: 4294921745 oldest_pkt: 1 4294921745\n';
    expect(parseRecentList(list)).toEqual(['10.242.255.2', '2001:db8::7']);
    expect(parseRecentList('')).toEqual([]);
  });

  it("reads the packet counter of the rule that records into the run's list", () => {
    const listing = [
      'Chain HAPTIC-EGRESS-42 (1 references)',
      '    pkts      bytes target     prot opt in     out     source               destination',
      '      12      900 RETURN     0    --  *      lo      0.0.0.0/0            0.0.0.0/0',
      '       5      269            0    --  *      *       0.0.0.0/0            0.0.0.0/0            cgroup haptic-egress-42 recent: SET name: haptic-egress-42-4 side: dest mask: 255.255.255.255',
    ].join('\n');
    expect(parseRuleCounter(listing, 'name: haptic-egress-42-4')).toBe(5);
    expect(parseRuleCounter(listing, 'name: haptic-egress-42-6')).toBe(0);
  });

  it('finds the chains of guarded runs among the rules, and nothing else', () => {
    const rules = [
      '-P OUTPUT ACCEPT',
      '-N HAPTIC-EGRESS-17567',
      '-N HAPTIC-EGRESS-x1',
      '-N KUBE-SERVICES',
      '-N HAPTIC-EGRESS-42',
      '-A OUTPUT -j HAPTIC-EGRESS-17567',
      '-A HAPTIC-EGRESS-42 -o lo -j RETURN',
    ].join('\n');
    expect(guardChainIds(rules)).toEqual(['17567', '42']);
    expect(guardChainIds('')).toEqual([]);
  });

  it('names the destinations and the fix', () => {
    expect(describeEgress({ packets: 2, destinations: ['198.51.100.7'] })).toMatch(
      /^2 packet\(s\) from the guarded run were addressed off this machine \(the guard stopped them\), to: 198\.51\.100\.7\. /,
    );
  });
});
