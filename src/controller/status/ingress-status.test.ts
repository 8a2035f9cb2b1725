import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  knownStatuses,
  parseStatusAddresses,
  serviceAddresses,
  statusWrites,
} from './ingress-status.ts';

describe('serviceAddresses', () => {
  it.each<[string, V1Service, unknown]>([
    [
      "publishes a LoadBalancer Service's assigned addresses, IP or name",
      {
        spec: { type: 'LoadBalancer', clusterIP: '10.96.0.10' },
        status: {
          loadBalancer: { ingress: [{ ip: '203.0.113.7' }, { hostname: 'lb.example.com' }] },
        },
      },
      [{ ip: '203.0.113.7' }, { hostname: 'lb.example.com' }],
    ],
    [
      'falls back to the cluster IP while the load balancer is pending',
      { spec: { type: 'LoadBalancer', clusterIP: '10.96.0.10' }, status: { loadBalancer: {} } },
      [{ ip: '10.96.0.10' }],
    ],
    [
      'publishes external IPs before the cluster IP',
      { spec: { type: 'NodePort', clusterIP: '10.96.0.10', externalIPs: ['198.51.100.4'] } },
      [{ ip: '198.51.100.4' }],
    ],
    [
      'publishes both cluster IPs of a dual-stack Service',
      {
        spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10', 'fd00::a'] },
      },
      [{ ip: '10.96.0.10' }, { ip: 'fd00::a' }],
    ],
    [
      "publishes an ExternalName Service's name",
      { spec: { type: 'ExternalName', externalName: 'edge.example.com' } },
      [{ hostname: 'edge.example.com' }],
    ],
    ['has nothing for a headless Service', { spec: { type: 'ClusterIP', clusterIP: 'None' } }, []],
  ])('%s', (_, service, expected) => {
    expect(serviceAddresses(service)).toEqual(expected);
  });
});

describe('parseStatusAddresses', () => {
  it('reads IPv4, IPv6 and DNS names, comma-separated', () => {
    expect(parseStatusAddresses('203.0.113.10, 2001:db8::1,lb.example.com')).toEqual([
      { ip: '203.0.113.10' },
      { ip: '2001:db8::1' },
      { hostname: 'lb.example.com' },
    ]);
  });

  it.each(['LB.example.com', 'lb_1.example.com', '', 'a,,b', '*.example.com', '203.0.113.10/32'])(
    'refuses %j, naming the entry and the fix',
    (text) => {
      expect(parseStatusAddresses(text)).toMatch(
        /^".*" is neither an IP address nor a lower-case DNS name; write for example 203\.0\.113\.10,lb\.example\.com\.$/,
      );
    },
  );
});

const ours = [{ ip: '10.96.0.10' }];
const theirs = [{ ip: '192.0.2.99' }];

describe('statusWrites', () => {
  it.each<[string, [string, { ip: string }[]][], string[], { set: string[]; clear: string[] }]>([
    [
      'publishes on a served Ingress that carries nothing',
      [],
      ['a/one'],
      { set: ['a/one'], clear: [] },
    ],
    [
      'writes nothing where the address is already there',
      [['a/one', ours]],
      ['a/one'],
      { set: [], clear: [] },
    ],
    [
      'replaces an old address on a served Ingress',
      [['a/one', theirs]],
      ['a/one'],
      { set: ['a/one'], clear: [] },
    ],
    [
      'clears the address from an Ingress no longer served',
      [
        ['a/one', ours],
        ['a/two', ours],
      ],
      ['a/one'],
      { set: [], clear: ['a/two'] },
    ],
    ['clears nothing that carries no address', [['a/two', []]], [], { set: [], clear: [] }],
  ])('%s', (_, known, served, expected) => {
    expect(statusWrites(new Map(known), new Set(served), ours)).toEqual(expected);
  });
});

describe('knownStatuses (a new leader’s first list)', () => {
  it('keeps served Ingresses as they are, unserved ones with exactly our address, and leaves other controllers’ alone', () => {
    const known = knownStatuses(
      [
        { key: 'a/served-empty', addresses: [] },
        { key: 'a/served-old', addresses: theirs },
        { key: 'a/left-ours', addresses: [{ ip: '10.96.0.10', hostname: undefined }] },
        { key: 'b/other-controller', addresses: theirs },
        { key: 'b/nothing', addresses: [] },
      ],
      new Set(['a/served-empty', 'a/served-old']),
      ours,
    );
    expect([...known]).toEqual([
      ['a/served-empty', []],
      ['a/served-old', theirs],
      ['a/left-ours', ours],
    ]);
    expect(statusWrites(known, new Set(['a/served-empty', 'a/served-old']), ours)).toEqual({
      set: ['a/served-empty', 'a/served-old'],
      clear: ['a/left-ours'],
    });
  });
});
