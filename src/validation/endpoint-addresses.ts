/**
 * Addresses a backend server may never use, whatever an EndpointSlice says: HAProxy runs on
 * a host with its own services (the agent, the master socket, and locally the controllers'
 * health and metrics ports), so an endpoint that points back at that host, or at no host,
 * is refused. The API server already refuses most of these in IPv4 and IPv6 slices; FQDN
 * slices name hosts whose addresses only the resolver knows, so every resolved address is
 * checked here too. Pure.
 */
import { BlockList, isIP } from 'node:net';

interface RefusedRange {
  readonly what: string;
  readonly ranges: readonly (readonly [string, number, 'ipv4' | 'ipv6'])[];
}

/** In order; the first range that holds an address names the refusal. */
const refusedRanges: readonly RefusedRange[] = [
  {
    what: 'a loopback address (the HAProxy host itself)',
    ranges: [
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ],
  },
  {
    what: 'an unspecified address (no host, which HAProxy may take as its own)',
    ranges: [
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ],
  },
  {
    what: 'a link-local address (the HAProxy host’s own link, e.g. a cloud metadata service)',
    ranges: [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
  },
  {
    what: 'a multicast address',
    ranges: [
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ],
  },
  {
    what: 'a reserved or broadcast address',
    ranges: [['240.0.0.0', 4, 'ipv4']],
  },
  {
    what: 'an IPv4-compatible IPv6 address (deprecated; write the IPv4 address)',
    ranges: [['::', 96, 'ipv6']],
  },
];

const blocks = refusedRanges.map(({ what, ranges }) => {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family);
  return { what, list };
});

/**
 * Why `address` may not be a backend server, or undefined when it may. IPv4-mapped IPv6
 * addresses (`::ffff:127.0.0.1`) are judged as the IPv4 address they carry.
 */
export function addressRefusal(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (address.includes('%')) return 'an address with a zone index (only link-local ones have it)';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return blocks.find(({ list }) => list.check(address, type))?.what;
}
