import { describe, expect, it } from 'vitest';
import { cniBinDir } from '../../../dev/lib/node/node-config.ts';
import { busyboxBinary, catatonitBinary } from '../../../dev/lib/node/node-images.ts';
import {
  describeViolation,
  nodePreflight,
  type HostFacts,
} from '../../../dev/lib/node/node-preflight.ts';
import { nodeTools } from '../../../dev/lib/node/node-tools.ts';
import { pinnedToolBin } from '../../../dev/lib/tools.ts';

/** A machine that has everything. */
const complete: HostFacts = {
  root: true,
  commands: new Set(
    ['containerd', 'containerd-shim-runc-v2', 'ctr', 'runc', 'ip', 'iptables'].concat([
      'nsenter',
      'unshare',
      'flock',
      'mount',
      'tar',
      'openssl',
    ]),
  ),
  paths: new Set([
    ...nodeTools.map(pinnedToolBin),
    ...['bridge', 'host-local', 'portmap', 'loopback'].map((plugin) => `${cniBinDir}/${plugin}`),
  ]),
  staticExecutables: new Set([busyboxBinary, catatonitBinary]),
  filesystems: new Set(['ext4', 'overlay', 'tmpfs']),
  cgroupControllers: new Set(['cpu', 'cpuacct', 'cpuset', 'memory', 'pids']),
  bridgeNetfilter: true,
};

const without = <K extends keyof HostFacts>(key: K, value: HostFacts[K]): HostFacts => ({
  ...complete,
  [key]: value,
});
const minus = (set: ReadonlySet<string>, item: string): Set<string> =>
  new Set([...set].filter((entry) => entry !== item));

describe('node preflight', () => {
  it('passes a machine that has everything', () => {
    expect(nodePreflight(complete)).toEqual([]);
  });

  it.each([
    ['not root', without('root', false), /root is missing; run it as root/],
    [
      'no containerd',
      without('commands', minus(complete.commands, 'containerd')),
      /the command containerd is missing; run `make setup`.*apt-get install containerd\./,
    ],
    [
      'no runc',
      without('commands', minus(complete.commands, 'runc')),
      /the command runc is missing;.*apt-get install runc\./,
    ],
    [
      'no bridge plugin',
      without('paths', minus(complete.paths, `${cniBinDir}/bridge`)),
      /the CNI plugin \/usr\/lib\/cni\/bridge is missing;.*containernetworking-plugins/,
    ],
    [
      'a dynamically linked busybox',
      without('staticExecutables', minus(complete.staticExecutables, busyboxBinary)),
      /a statically linked \/bin\/busybox .* is missing;.*apt-get install busybox-static/,
    ],
    [
      'no kubelet build',
      without('paths', minus(complete.paths, pinnedToolBin('kubelet'))),
      /the pinned kubelet \(.*\.tools\/bin\/kubelet\) is missing; run `make setup` \(dev\/install-tools\.sh/,
    ],
    [
      'no overlay filesystem',
      without('filesystems', new Set(['ext4'])),
      /the overlay filesystem .* is missing; modprobe overlay\./,
    ],
    [
      'no br_netfilter',
      without('bridgeNetfilter', false),
      /bridge netfilter .* is missing; modprobe br_netfilter\./,
    ],
    [
      'no pids controller',
      without('cgroupControllers', minus(complete.cgroupControllers, 'pids')),
      /the pids cgroup controller \(kubelet\) is missing; mount it/,
    ],
  ])('names what is missing and the fix, in one line: %s', (_, facts, message) => {
    const violations = nodePreflight(facts).map(describeViolation);
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(message);
    expect(violations[0]).not.toContain('\n');
  });

  it('lists every missing thing, one line each', () => {
    const facts = { ...complete, bridgeNetfilter: false, filesystems: new Set<string>() };
    expect(nodePreflight(facts).map((violation) => violation.what)).toEqual([
      'the overlay filesystem (containerd snapshots)',
      'bridge netfilter (Service traffic between Pods on the bridge)',
    ]);
  });
});
