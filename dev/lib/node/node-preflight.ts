/**
 * What a node needs from this machine, checked before anything starts: each missing tool or
 * kernel feature is one line naming it and the fix. Facts are gathered once (I/O); the
 * checks are pure functions over them.
 */
import { existsSync, openSync, readFileSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { nodeEnv } from './node-host.ts';
import { cniBinDir } from './node-config.ts';
import { busyboxBinary, catatonitBinary } from './node-images.ts';
import { isStaticExecutable } from './static-executable.ts';
import { pinnedToolBin } from '../tools.ts';
import { nodeTools } from './node-tools.ts';

export interface HostFacts {
  readonly root: boolean;
  /** Commands found on the node's PATH, among those the node needs. */
  readonly commands: ReadonlySet<string>;
  /** Paths that exist, among those the node needs. */
  readonly paths: ReadonlySet<string>;
  /** Paths that hold a statically linked executable. */
  readonly staticExecutables: ReadonlySet<string>;
  /** Filesystem types the kernel knows (/proc/filesystems). */
  readonly filesystems: ReadonlySet<string>;
  /** Cgroup controllers mounted (v1 hierarchies, or listed by the v2 root). */
  readonly cgroupControllers: ReadonlySet<string>;
  /** The bridge netfilter hook (br_netfilter) is present. */
  readonly bridgeNetfilter: boolean;
}

export interface Violation {
  /** What is missing, by name. */
  readonly what: string;
  /** How to get it. */
  readonly fix: string;
}

const setup = 'run `make setup` (dev/install-system-packages.sh)';

/** Commands and the Debian package that has them. */
const commands: ReadonlyArray<readonly [string, string]> = [
  ['containerd', 'containerd'],
  ['containerd-shim-runc-v2', 'containerd'],
  ['ctr', 'containerd'],
  ['runc', 'runc'],
  ['ip', 'iproute2'],
  ['iptables', 'iptables'],
  ['nsenter', 'util-linux'],
  ['unshare', 'util-linux'],
  ['flock', 'util-linux'],
  ['mount', 'mount'],
  ['tar', 'tar'],
  ['openssl', 'openssl'],
];
const cniPlugins = ['bridge', 'host-local', 'portmap', 'loopback'];
const staticBinaries: ReadonlyArray<readonly [string, string]> = [
  [busyboxBinary, 'busybox-static'],
  [catatonitBinary, 'catatonit'],
];
const controllers = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids'];

/** Every path the checks look at. */
function neededPaths(): string[] {
  return [
    ...nodeTools.map(pinnedToolBin),
    ...cniPlugins.map((plugin) => join(cniBinDir, plugin)),
    ...staticBinaries.map(([path]) => path),
  ];
}

function missingCommands(facts: HostFacts): Violation[] {
  return commands
    .filter(([command]) => !facts.commands.has(command))
    .map(([command, pkg]) => ({
      what: `the command ${command}`,
      fix: `${setup}, or apt-get install ${pkg}`,
    }));
}

function missingTools(facts: HostFacts): Violation[] {
  return nodeTools
    .filter((tool) => !facts.paths.has(pinnedToolBin(tool)))
    .map((tool) => ({
      what: `the pinned ${tool} (${pinnedToolBin(tool)})`,
      fix: 'run `make setup` (dev/install-tools.sh builds it from tools/*/go.mod)',
    }));
}

function missingCniPlugins(facts: HostFacts): Violation[] {
  return cniPlugins
    .map((plugin) => join(cniBinDir, plugin))
    .filter((path) => !facts.paths.has(path))
    .map((path) => ({
      what: `the CNI plugin ${path}`,
      fix: `${setup}, or apt-get install containernetworking-plugins`,
    }));
}

function missingStaticBinaries(facts: HostFacts): Violation[] {
  return staticBinaries
    .filter(([path]) => !facts.staticExecutables.has(path))
    .map(([path, pkg]) => ({
      what: `a statically linked ${path} (the node's images are built from it)`,
      fix: `${setup}, or apt-get install ${pkg}`,
    }));
}

function missingKernelFeatures(facts: HostFacts): Violation[] {
  const found: Violation[] = [];
  if (!facts.filesystems.has('overlay')) {
    found.push({ what: 'the overlay filesystem (containerd snapshots)', fix: 'modprobe overlay' });
  }
  if (!facts.bridgeNetfilter) {
    found.push({
      what: 'bridge netfilter (Service traffic between Pods on the bridge)',
      fix: 'modprobe br_netfilter',
    });
  }
  for (const controller of controllers.filter((name) => !facts.cgroupControllers.has(name))) {
    found.push({
      what: `the ${controller} cgroup controller (kubelet)`,
      fix: `mount it (cgroup v1: mount -t cgroup -o ${controller} cgroup /sys/fs/cgroup/${controller}) or boot with cgroup v2`,
    });
  }
  return found;
}

/** Everything the machine lacks for a node, in the order to fix it. */
export function nodePreflight(facts: HostFacts): Violation[] {
  if (!facts.root) {
    return [
      { what: 'root', fix: 'run it as root: the node creates namespaces, cgroups and mounts' },
    ];
  }
  return [
    ...missingCommands(facts),
    ...missingCniPlugins(facts),
    ...missingStaticBinaries(facts),
    ...missingTools(facts),
    ...missingKernelFeatures(facts),
  ];
}

export function describeViolation(violation: Violation): string {
  return `node preflight: ${violation.what} is missing; ${violation.fix}.`;
}

function readHead(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    return buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0));
  } finally {
    closeSync(fd);
  }
}

function mountedControllers(): Set<string> {
  const found = new Set<string>();
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [, after = ''] = line.split(' - ');
    const [type, , options = ''] = after.split(' ');
    if (type === 'cgroup') for (const option of options.split(',')) found.add(option);
    if (type === 'cgroup2') {
      const mount = line.split(' ')[4] ?? '';
      const listed = join(mount, 'cgroup.controllers');
      if (existsSync(listed)) {
        for (const name of readFileSync(listed, 'utf8').trim().split(/\s+/)) found.add(name);
      }
    }
  }
  // cgroup v2 accounts CPU usage in its cpu controller; kubelet needs no separate cpuacct.
  if (found.has('cpu') && !existsSync('/sys/fs/cgroup/cpuacct')) found.add('cpuacct');
  return found;
}

/** Gathers the facts from this machine. */
export function gatherHostFacts(): HostFacts {
  const searchPath = (nodeEnv.PATH ?? '').split(':');
  const found = (command: string): boolean =>
    searchPath.some((dir) => existsSync(join(dir, command)));
  const paths = neededPaths().filter((path) => existsSync(path));
  return {
    root: process.getuid?.() === 0,
    commands: new Set(commands.map(([command]) => command).filter(found)),
    paths: new Set(paths),
    staticExecutables: new Set(
      staticBinaries
        .map(([path]) => path)
        .filter((path) => existsSync(path) && isStaticExecutable(readHead(path))),
    ),
    filesystems: new Set(
      readFileSync('/proc/filesystems', 'utf8')
        .split('\n')
        .map((line) => line.trim().split(/\s+/).at(-1) ?? ''),
    ),
    cgroupControllers: mountedControllers(),
    bridgeNetfilter: existsSync('/proc/sys/net/bridge/bridge-nf-call-iptables'),
  };
}
