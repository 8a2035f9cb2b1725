/**
 * The node's share of this machine (cgroup, network and mount namespaces, host link), held
 * by node-host.sh under the usual watchdog, and the way every node process enters it.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  startSupervised,
  type StartOptions,
  type SupervisedProcess,
} from '../supervised-process.ts';
import {
  hostAddress,
  hostInterface,
  linkPrefix,
  nodeAddress,
  nodeNetns,
  podSubnet,
  serviceCidr,
} from './node-network.ts';

/** Machine-wide: one node per machine (its lock, holder PID and containerd socket). */
export const nodeRunDir = '/run/haptic-node';
/** The PID of the keeper of the node `make cluster-up` started (node-keeper.ts). */
export const keeperPidFile = join(nodeRunDir, 'keeper.pid');
/** The cgroup (in every hierarchy) holding every process of the node. */
export const nodeCgroup = 'haptic-node';
const script = join(import.meta.dirname, 'node-host.sh');

const settings: NodeJS.ProcessEnv = {
  NODE_NETNS: nodeNetns,
  NODE_CGROUP: nodeCgroup,
  NODE_RUN_DIR: nodeRunDir,
  HOST_IF: hostInterface,
  HOST_ADDR: `${hostAddress}/${String(linkPrefix)}`,
  NODE_ADDR: `${nodeAddress}/${String(linkPrefix)}`,
  NODE_IP: nodeAddress,
  POD_SUBNET: podSubnet,
  SERVICE_CIDR: serviceCidr,
};

/** The environment of the node's processes: the system's tools first (iptables, mount, runc). */
export const nodeEnv: NodeJS.ProcessEnv = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: '/root',
};

export interface NodeHost {
  readonly holder: SupervisedProcess;
  /** The process holding the node's namespaces (`/proc/<pid>/ns/{net,mnt}` are the node's). */
  readonly anchorPid: number;
  /** Starts a process inside the node (its cgroup, network and mount namespaces). */
  start(options: Omit<StartOptions, 'env'>): SupervisedProcess;
}

// Joins the node's cgroups, then its namespaces (those of the anchor process), then becomes
// the command.
const enter = `
while read -r dir; do echo $$ > "$dir/cgroup.procs" || exit 125; done < "$1"
read -r anchor _ < "$2" || exit 125
shift 2
exec nsenter --target "$anchor" --mount --net -- "$@"
`;

/**
 * Starts the holder and waits until the node's namespaces exist. Fails with the holder's
 * one-line reason (what is missing and the fix) when it cannot set them up.
 */
export async function holdNodeHost(
  logFile: string,
  ownerPid: number | null | undefined,
): Promise<NodeHost> {
  const owner = ownerPid === undefined ? {} : { ownerPid };
  const token = randomUUID();
  const holder = startSupervised({
    name: 'node-host',
    command: 'bash',
    args: [script, 'hold'],
    logFile,
    env: { ...nodeEnv, ...settings, NODE_HOLD_TOKEN: token },
    ...owner,
  });
  const state = { exited: false };
  void holder.exited.then(() => {
    state.exited = true;
  });
  const anchorFile = join(nodeRunDir, 'anchor.pid');
  const anchor = (): number | undefined => {
    const [pid, written] = existsSync(anchorFile)
      ? readFileSync(anchorFile, 'utf8').split(' ')
      : [];
    return written?.trim() === token ? Number(pid) : undefined;
  };
  const deadline = Date.now() + 40_000;
  let anchorPid: number | undefined;
  while ((anchorPid = anchor()) === undefined) {
    if (state.exited || Date.now() > deadline) {
      await holder.stop();
      const last = readFileSync(logFile, 'utf8').trim().split('\n').at(-1) ?? '';
      throw new Error(`The node cannot start: ${last || 'its host set-up did not finish in 40 s'}`);
    }
    await sleep(50);
  }
  return {
    holder,
    anchorPid,
    start(options) {
      return startSupervised({
        ...options,
        command: 'bash',
        args: [
          ...['-c', enter, 'node-exec', join(nodeRunDir, 'cgroups'), anchorFile],
          ...[options.command, ...options.args],
        ],
        env: nodeEnv,
      });
    },
  };
}

/**
 * Removes what a node left behind when its holder was killed outright (processes, cgroups,
 * namespaces, link, address claims). Refuses while a holder is alive.
 */
export function cleanNodeHost(): { ok: boolean; message: string } {
  const result = spawnSync('bash', [script, 'clean'], {
    env: { ...nodeEnv, ...settings },
    encoding: 'utf8',
  });
  return { ok: result.status === 0, message: (result.stdout + result.stderr).trim() };
}

/** True while a node holder holds the machine's node lock. */
export function nodeRunning(): boolean {
  const lock = join(nodeRunDir, 'lock');
  return existsSync(lock) && spawnSync('flock', ['-n', lock, 'true']).status !== 0;
}
