import { describe, expect, it } from 'vitest';
import {
  type EndpointRules,
  addressRefusal,
  embeddedIpv4,
  endpointRefusal,
} from './endpoint-addresses.ts';

function escaped(text: string): string {
  return text.replace(/[()[\]./*+?]/g, '\\$&');
}

describe('addressRefusal: the fixed ranges, wherever HAProxy runs', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.0.0.11', 'a loopback address'],
    ['127.255.255.254', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['::ffff:127.0.0.11', 'a loopback address'],
    ['0:0:0:0:0:ffff:7f00:b', 'a loopback address'],
    ['0.0.0.0', 'an unspecified address'],
    ['0.1.2.3', 'an unspecified address'],
    ['::', 'an unspecified address'],
    ['::ffff:0.0.0.0', 'an unspecified address'],
    ['169.254.169.254', 'a link-local address'],
    ['fe80::1', 'a link-local address'],
    ['FE80::1', 'a link-local address'],
    ['febf:ffff::1', 'a link-local address'],
    ['::ffff:169.254.1.1', 'a link-local address'],
    ['224.0.0.1', 'a multicast address'],
    ['239.255.255.255', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['255.255.255.255', 'a reserved or broadcast address'],
    ['240.0.0.1', 'a reserved or broadcast address'],
    ['::127.0.0.1', 'an IPv4-compatible IPv6 address'],
    ['::a00:1', 'an IPv4-compatible IPv6 address'],
    ['fe80::1%eth0', 'an address with a zone index'],
    ['localhost', 'not an IP address'],
    ['127.1', 'not an IP address'],
    ['', 'not an IP address'],
  ])('refuses %s as %s', (address, why) => {
    expect(addressRefusal(address)).toMatch(new RegExp(`^${escaped(why)}`));
  });

  it.each([
    '10.244.0.2',
    '10.96.0.1',
    '192.168.1.1',
    '172.16.0.1',
    '8.8.8.8',
    '126.255.255.255',
    '128.0.0.1',
    '169.253.255.255',
    '169.255.0.1',
    '223.255.255.255',
    '1.0.0.0',
    'fd00::1',
    '2001:db8::1',
    'fec0::1',
    'fe7f::1',
    '::ffff:10.0.0.1',
    '::1:0:0:1',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('accepts %s', (address) => {
    expect(addressRefusal(address)).toBeUndefined();
  });
});

describe('addressRefusal: IPv6 forms that carry a refused IPv4 address', () => {
  it.each([
    ['a NAT64 address of the well-known prefix', '64:ff9b::7f00:1', '64:ff9b::/96', '127.0.0.1'],
    ['the same written with a dotted quad', '64:ff9b::127.0.0.1', '64:ff9b::/96', '127.0.0.1'],
    ['a local-use NAT64 address, /96 network', '64:ff9b:1::7f00:1', '64:ff9b:1::/48', '127.0.0.1'],
    [
      'a local-use NAT64 address, /64 network',
      '64:ff9b:1:0:7f:0:100:0',
      '64:ff9b:1::/48',
      '127.0.0.1',
    ],
    ['a local-use NAT64 address, /56 network', '64:ff9b:1:7f:0:1::', '64:ff9b:1::/48', '127.0.0.1'],
    [
      'a local-use NAT64 address, /48 network',
      '64:ff9b:1:7f00:0:100::',
      '64:ff9b:1::/48',
      '127.0.0.1',
    ],
    [
      'a NAT64 address of a metadata service',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::/96',
      '169.254.169.254',
    ],
    ['a 6to4 address', '2002:7f00:1::1', '2002::/16', '127.0.0.1'],
    ['a Teredo address of a loopback server', '2001:0:7f00:1::1', '2001::/32', '127.0.0.1'],
    [
      'a Teredo address of a loopback client (inverted)',
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
      '2001::/32',
      '127.0.0.1',
    ],
  ])('refuses %s (%s): %s carries %s', (_, address, form, carried) => {
    expect(addressRefusal(address)).toMatch(
      new RegExp(`^a[n]? [^,]*${escaped(form)}[^,]* that carries ${escaped(carried)}, a `),
    );
  });

  it('refuses an IPv4-translated (SIIT) address of loopback', () => {
    expect(addressRefusal('::ffff:0:7f00:1')).toBe(
      'an IPv4-translated (SIIT) address that carries 127.0.0.1, a loopback address (the HAProxy host itself)',
    );
  });

  it.each([
    ['NAT64, well-known prefix', '64:ff9b::c000:22d', ['192.0.2.45']],
    ['6to4', '2002:c000:22d::1', ['192.0.2.45']],
    [
      'Teredo (server, then the inverted client)',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      ['65.54.227.120', '192.0.2.45'],
    ],
    ['no form', 'fd00::1', []],
  ])('finds the IPv4 addresses a %s address carries', (_, address, carried) => {
    expect(embeddedIpv4(address).map((each) => each.ipv4)).toEqual(carried);
  });
});

const rules: EndpointRules = {
  ownPods: [
    { name: 'haptic/haptic-haproxy-7d9-abcde', addresses: ['10.244.254.10', 'fd00:10:244::a'] },
    { name: 'haptic/haptic-controller-5c4-fghij', addresses: ['10.244.254.20'] },
  ],
  podCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56'],
  podCIDRsFrom: 'nodes',
  allowedCIDRs: [],
};

describe("endpointRefusal: the release's own Pods", () => {
  it.each([
    ["an HAProxy Pod's IPv4 address", '10.244.254.10', 'haptic/haptic-haproxy-7d9-abcde'],
    ["an HAProxy Pod's IPv6 address", 'fd00:10:244:0::a', 'haptic/haptic-haproxy-7d9-abcde'],
    [
      "an HAProxy Pod's address written IPv4-mapped",
      '::ffff:10.244.254.10',
      'haptic/haptic-haproxy-7d9-abcde',
    ],
    ["a controller Pod's address", '10.244.254.20', 'haptic/haptic-controller-5c4-fghij'],
  ])('refuses %s, naming the Pod', (_, address, pod) => {
    expect(endpointRefusal(address, rules)?.why).toBe(
      `the address of Pod ${pod}, one of the ingress controller's own Pods (HAProxy or its controller), so requests sent there would come back into HAProxy`,
    );
  });

  it("refuses a NAT64 form of an HAProxy Pod's address, when NAT64 addresses are allowed", () => {
    const nat64 = { ...rules, allowedCIDRs: ['64:ff9b::/96'] };
    expect(endpointRefusal('64:ff9b::af4:fe0a', nat64)?.why).toBe(
      "a NAT64 address (64:ff9b::/96) that carries 10.244.254.10, the address of Pod haptic/haptic-haproxy-7d9-abcde, one of the ingress controller's own Pods (HAProxy or its controller), so requests sent there would come back into HAProxy",
    );
  });

  it.each(['10.244.254.11', 'fd00:10:244::b', '::ffff:10.244.254.11'])(
    "accepts %s, a Pod address that is not the release's",
    (address) => {
      expect(endpointRefusal(address, rules)).toBeUndefined();
    },
  );
});

describe('endpointRefusal: the ranges endpoints may use', () => {
  it.each([
    ['a host outside the cluster', '203.0.113.7'],
    ['a ClusterIP of the Service range', '10.96.0.10'],
    ['a node address', '192.168.49.2'],
    ['an IPv6 address outside the Pod CIDR', 'fd00:10:245::1'],
    ['an IPv4-mapped address outside the Pod CIDR', '::ffff:203.0.113.7'],
    ['a NAT64 address of an ordinary host', '64:ff9b::cb00:7107'],
  ])('refuses %s (%s) by default, naming the Pod CIDRs and where they come from', (_, address) => {
    expect(endpointRefusal(address, rules)).toEqual({
      why: "outside the cluster's Pod CIDRs (10.244.0.0/16, fd00:10:244::/56, from the Nodes' spec.podCIDRs)",
      fix: "List the addresses of the Service's Pods; for addresses elsewhere (the Service range, host-network Pods, hosts outside the cluster) the cluster operator adds their range to controller.endpoints.allowedCIDRs.",
    });
  });

  it('serves a range the operator allows besides the Pod CIDRs, and names it when refusing', () => {
    const wider = { ...rules, allowedCIDRs: ['10.96.0.0/12', '64:ff9b::/96'] };
    expect(endpointRefusal('10.96.0.10', wider)).toBeUndefined();
    expect(endpointRefusal('64:ff9b::cb00:7107', wider)).toBeUndefined();
    expect(endpointRefusal('203.0.113.7', wider)?.why).toBe(
      "outside the cluster's Pod CIDRs (10.244.0.0/16, fd00:10:244::/56, from the Nodes' spec.podCIDRs) and the further ranges allowed (10.96.0.0/12, 64:ff9b::/96)",
    );
  });

  it('never lets an IPv6 range hold an IPv4 address', () => {
    expect(endpointRefusal('203.0.113.7', { ...rules, allowedCIDRs: ['::/0'] })).toBeDefined();
    expect(endpointRefusal('fd01::1', { ...rules, allowedCIDRs: ['::/0'] })).toBeUndefined();
  });

  it('says the Pod CIDRs come from the value when they do', () => {
    const valued = { ...rules, podCIDRsFrom: 'value' as const };
    expect(endpointRefusal('203.0.113.7', valued)?.why).toBe(
      "outside the cluster's Pod CIDRs (10.244.0.0/16, fd00:10:244::/56, from controller.endpoints.podCIDRs)",
    );
  });

  it('leaves the range rule out while no Node has Pod CIDRs and no value names them, the other rules holding', () => {
    const unknown = { ...rules, podCIDRs: [] };
    expect(endpointRefusal('203.0.113.7', unknown)).toBeUndefined();
    expect(endpointRefusal('127.0.0.1', unknown)?.why).toContain('loopback');
  });

  it('names the fixed range before the ranges (a loopback address is loopback, not just outside)', () => {
    expect(endpointRefusal('127.0.0.1', rules)?.why).toBe(
      'a loopback address (the HAProxy host itself)',
    );
  });

  it.each(['10.244.0.5', '10.244.254.11', 'fd00:10:244::5', '::ffff:10.244.0.5'])(
    'accepts %s, an address in the Pod CIDRs',
    (address) => {
      expect(endpointRefusal(address, rules)).toBeUndefined();
    },
  );
});
