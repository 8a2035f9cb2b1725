import { describe, expect, it } from 'vitest';
import { addressRefusal } from './endpoint-addresses.ts';

describe('addressRefusal', () => {
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
    expect(addressRefusal(address)).toMatch(new RegExp(`^${why.replace(/[()]/g, '\\$&')}`));
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
  ])('accepts %s', (address) => {
    expect(addressRefusal(address)).toBeUndefined();
  });
});
