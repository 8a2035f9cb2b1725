/**
 * What a real node leaves on this machine, looked up from outside: every place a process,
 * cgroup, namespace, link, route, mount, iptables chain or address claim of the node could
 * remain. Empty after a stop, or after the node's owner was SIGKILLed and its watchdogs ran.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { nodeCgroup, nodeRunDir } from '../../../dev/lib/node/node-host.ts';
import { hostInterface, nodeNetns, podSubnet } from '../../../dev/lib/node/node-network.ts';

export interface NodeTrace {
  /** The node's network and mount namespaces (`net:[…]`, `mnt:[…]`). */
  readonly namespaces: readonly string[];
  readonly dir: string;
}

function link(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Records the node's namespaces while it runs (from its anchor process). */
export function traceNode(anchorPid: number, dir: string): NodeTrace {
  const namespaces = ['net', 'mnt'].map((kind) => link(`/proc/${String(anchorPid)}/ns/${kind}`));
  return { namespaces: namespaces.filter((ns): ns is string => ns !== undefined), dir };
}

function cgroupMounts(): string[] {
  return read('/proc/self/mountinfo')
    .split('\n')
    .filter((line) => / - cgroup2? /.test(line))
    .map((line) => line.split(' ')[4] ?? '');
}

function leftoverProcesses(trace: NodeTrace): string[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      const stat = read(`/proc/${pid}/stat`);
      if (stat === '' || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
      const inNamespace = ['net', 'mnt'].some((kind) =>
        trace.namespaces.includes(link(`/proc/${pid}/ns/${kind}`) ?? ''),
      );
      return inNamespace || read(`/proc/${pid}/cgroup`).includes(`:/${nodeCgroup}`);
    })
    .map((pid) => `process ${pid} (${read(`/proc/${pid}/comm`).trim()})`);
}

/** Everything of the node still on this machine, one entry per thing. */
export function nodeLeftovers(trace: NodeTrace): string[] {
  const found = leftoverProcesses(trace);
  for (const mount of cgroupMounts()) {
    if (existsSync(join(mount, nodeCgroup))) found.push(`cgroup ${join(mount, nodeCgroup)}`);
  }
  if (existsSync(`/run/netns/${nodeNetns}`)) found.push(`network namespace ${nodeNetns}`);
  if (existsSync(`/sys/class/net/${hostInterface}`)) found.push(`link ${hostInterface}`);
  const route = spawnSync('ip', ['route', 'show', podSubnet], { encoding: 'utf8' }).stdout.trim();
  if (route !== '') found.push(`route ${route}`);
  for (const line of read('/proc/self/mountinfo').split('\n')) {
    if (line.includes(trace.dir) || line.includes(nodeRunDir) || line.includes(' haptic-node ')) {
      found.push(`mount ${line}`);
    }
  }
  for (const table of ['filter', 'nat', 'mangle']) {
    const rules = spawnSync('iptables', ['-w', '-t', table, '-S'], { encoding: 'utf8' }).stdout;
    for (const chain of rules.split('\n').filter((rule) => /^-N (KUBE-|CNI-)/.test(rule))) {
      found.push(`iptables ${table} ${chain}`);
    }
  }
  if (existsSync(join(nodeRunDir, 'containerd.sock'))) found.push('containerd socket');
  return found;
}
