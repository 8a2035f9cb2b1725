import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KeptEndpointRules, endpointRulesOf, nodePodCIDRs, ownPodsOf } from './endpoint-rules.ts';

function pod(name: string, status: NonNullable<V1Pod['status']>, deleting = false): V1Pod {
  return {
    metadata: {
      namespace: 'haptic',
      name,
      ...(deleting ? { deletionTimestamp: new Date('2026-12-01T00:00:00Z') } : {}),
    },
    status,
  };
}

function node(name: string, spec: NonNullable<V1Node['spec']>): V1Node {
  return { metadata: { name }, spec };
}

describe('ownPodsOf', () => {
  it.each([
    [
      'takes a running Pod with its address',
      pod('haptic-haproxy-a', { phase: 'Running', podIP: '10.244.0.5' }),
      [{ name: 'haptic/haptic-haproxy-a', addresses: ['10.244.0.5'] }],
    ],
    [
      'takes every address of a dual-stack Pod once',
      pod('haptic-haproxy-b', {
        phase: 'Running',
        podIP: '10.244.0.6',
        podIPs: [{ ip: '10.244.0.6' }, { ip: 'fd00:10:244::6' }],
      }),
      [{ name: 'haptic/haptic-haproxy-b', addresses: ['10.244.0.6', 'fd00:10:244::6'] }],
    ],
    [
      'takes a Pod that is not running yet but has an address (HAProxy may listen already)',
      pod('haptic-haproxy-c', { phase: 'Pending', podIP: '10.244.0.7' }),
      [{ name: 'haptic/haptic-haproxy-c', addresses: ['10.244.0.7'] }],
    ],
    [
      'takes a Pod being deleted (it listens until it is gone)',
      pod('haptic-controller-d', { phase: 'Running', podIP: '10.244.0.8' }, true),
      [{ name: 'haptic/haptic-controller-d', addresses: ['10.244.0.8'] }],
    ],
    [
      'leaves out a Failed Pod (its address may belong to another Pod now)',
      pod('haptic-haproxy-e', { phase: 'Failed', podIP: '10.244.0.9' }),
      [],
    ],
    [
      'leaves out a Succeeded Pod',
      pod('haptic-haproxy-f', { phase: 'Succeeded', podIP: '10.244.0.10' }),
      [],
    ],
    ['leaves out a Pod without an address', pod('haptic-haproxy-g', { phase: 'Pending' }), []],
    [
      'leaves out what is not an address',
      pod('haptic-haproxy-h', { phase: 'Running', podIP: 'not-an-ip' }),
      [],
    ],
  ])('%s', (_, given, expected) => {
    expect(ownPodsOf([given])).toEqual(expected);
  });
});

describe('nodePodCIDRs', () => {
  it.each([
    [
      'takes spec.podCIDRs of every Node, each once, sorted',
      [
        node('b', { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'] }),
        node('a', { podCIDR: '10.244.0.0/24', podCIDRs: ['10.244.0.0/24'] }),
        node('c', { podCIDRs: ['10.244.0.0/24'] }),
      ],
      ['10.244.0.0/24', '10.244.1.0/24', 'fd00:10:244:1::/64'],
    ],
    [
      'takes spec.podCIDR where spec.podCIDRs is missing',
      [node('a', { podCIDR: '10.244.2.0/24' })],
      ['10.244.2.0/24'],
    ],
    ['finds none when no Node has one', [node('a', {}), node('b', { podCIDRs: [] })], []],
    ['skips what is not a CIDR', [node('a', { podCIDRs: ['10.244.3.0', 'x/24'] })], []],
  ])('%s', (_, nodes, expected) => {
    expect(nodePodCIDRs(nodes)).toEqual(expected);
  });
});

describe('endpointRulesOf', () => {
  const nodes = [node('a', { podCIDRs: ['10.244.0.0/24'] })];

  it('takes the Pod CIDRs from the Nodes when the value names none, and says so', () => {
    expect(endpointRulesOf([], nodes, { allowedCIDRs: ['10.96.0.0/12'] })).toEqual({
      ownPods: [],
      podCIDRs: ['10.244.0.0/24'],
      podCIDRsFrom: 'nodes',
      allowedCIDRs: ['10.96.0.0/12'],
    });
  });

  it('takes the Pod CIDRs of the value over the Nodes’', () => {
    expect(endpointRulesOf([], nodes, { podCIDRs: ['10.0.0.0/8'] })).toEqual({
      ownPods: [],
      podCIDRs: ['10.0.0.0/8'],
      podCIDRsFrom: 'value',
      allowedCIDRs: [],
    });
  });
});

describe('KeptEndpointRules', () => {
  it('keeps the same object while the rules stay the same, and takes a change', () => {
    const pods = [pod('haptic-haproxy-a', { phase: 'Running', podIP: '10.244.0.5' })];
    const kept = new KeptEndpointRules(endpointRulesOf(pods, [], {}));
    const first = kept.current;
    // A status update that leaves the address as it was (readiness, a restart count).
    expect(kept.update(endpointRulesOf([...pods], [], {}))).toBe(false);
    expect(kept.current).toBe(first);
    const moved = [pod('haptic-haproxy-a', { phase: 'Running', podIP: '10.244.0.6' })];
    expect(kept.update(endpointRulesOf(moved, [], {}))).toBe(true);
    expect(kept.current).not.toBe(first);
    expect(kept.current.ownPods).toEqual([
      { name: 'haptic/haptic-haproxy-a', addresses: ['10.244.0.6'] },
    ]);
  });
});
