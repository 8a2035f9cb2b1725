import { BlockList, SocketAddress } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIp, inCidr, parseCidr, parseIp } from './ip-address.ts';

describe('parseIp and formatIp', () => {
  it.each([
    ['10.244.0.5', '10.244.0.5'],
    ['::1', '::1'],
    ['::', '::'],
    ['FE80::1', 'fe80::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['64:ff9b::127.0.0.1', '64:ff9b::7f00:1'],
    ['1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:102:304'],
    ['1:0:0:2:0:0:3:4', '1::2:0:0:3:4'],
    ['1:0:0:2::3', '1:0:0:2::3'],
  ])('reads %s and writes it as %s', (text, canonical) => {
    const bytes = parseIp(text);
    expect(bytes).toBeDefined();
    expect(formatIp(bytes ?? new Uint8Array())).toBe(canonical);
  });

  it.each(['localhost', '127.1', '', 'fe80::1%eth0', '10.0.0.256', '1::2::3'])(
    'reads %j as no address',
    (text) => {
      expect(parseIp(text)).toBeUndefined();
    },
  );

  it('reads back every IPv6 address it writes, and Node reads it as the same address', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const text = formatIp(bytes);
        expect(parseIp(text)).toEqual(bytes);
        const node = new SocketAddress({ address: text, family: 'ipv6' }).address;
        expect(parseIp(node)).toEqual(bytes);
      }),
    );
  });
});

describe('parseCidr and inCidr', () => {
  it.each([
    ['10.244.0.0/16', '10.244.255.1', true],
    ['10.244.0.0/16', '10.245.0.1', false],
    ['10.244.1.7/16', '10.244.9.9', true],
    ['10.0.0.0/9', '10.127.0.1', true],
    ['10.0.0.0/9', '10.128.0.1', false],
    ['0.0.0.0/0', '203.0.113.1', true],
    ['fd00:10:244::/56', 'fd00:10:244:ff::1', true],
    ['fd00:10:244::/56', 'fd00:10:244:100::1', false],
    ['::/0', '10.0.0.1', false],
    ['::/0', 'fd00::1', true],
    ['0.0.0.0/0', '::ffff:10.0.0.1', false],
  ])('%s holds %s: %s', (range, address, holds) => {
    const cidr = parseCidr(range);
    const bytes = parseIp(address);
    if (typeof cidr === 'string' || bytes === undefined) throw new Error('bad fixture');
    expect(inCidr(bytes, cidr)).toBe(holds);
  });

  it('agrees with Node’s BlockList on IPv4 ranges and addresses', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 4, maxLength: 4 }),
        fc.uint8Array({ minLength: 4, maxLength: 4 }),
        fc.integer({ min: 0, max: 32 }),
        (network, address, prefix) => {
          const cidr = parseCidr(`${formatIp(network)}/${String(prefix)}`);
          if (typeof cidr === 'string') throw new Error(cidr);
          const list = new BlockList();
          list.addSubnet(formatIp(network), prefix, 'ipv4');
          expect(inCidr(address, cidr)).toBe(list.check(formatIp(address), 'ipv4'));
        },
      ),
    );
  });

  it.each([
    ['10.0.0.0', 'it needs a prefix length from 0 to 32 after a /'],
    ['10.0.0.0/', 'it needs a prefix length from 0 to 32 after a /'],
    ['10.0.0.0/33', 'it needs a prefix length from 0 to 32 after a /'],
    ['10.0.0.0/08', 'it needs a prefix length from 0 to 32 after a /'],
    ['fd00::/129', 'it needs a prefix length from 0 to 128 after a /'],
    ['10.0.0/8', '10.0.0 is not an IP address'],
    ['fe80::1%eth0/64', 'fe80::1%eth0 is not an IP address'],
  ])('refuses %s: %s', (text, why) => {
    expect(parseCidr(text)).toBe(`${text} is not a CIDR: ${why}`);
  });
});
