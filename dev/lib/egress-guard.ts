/**
 * Counts and stops the packets a command and everything it starts address off this machine.
 * The command runs in a cgroup of its own; an iptables/ip6tables chain in OUTPUT counts packets
 * of that cgroup that do not go out the loopback interface and are not for the local cluster's
 * own ranges (cluster-network.ts), records each destination in an xt_recent list, so the report
 * names them, and rejects them, so none leaves even when a test goes wrong. Rules, lists and
 * cgroup exist only for the run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { clusterCidrs } from './cluster-network.ts';

export interface EgressReport {
  /** Packets counted, IPv4 and IPv6 together. */
  readonly packets: number;
  /** Destination addresses, as the kernel recorded them. */
  readonly destinations: readonly string[];
}

/** Destinations in an xt_recent list (`src=<address> ttl: … last_seen: …` lines). */
export function parseRecentList(text: string): string[] {
  return text
    .split('\n')
    .map((line) => /^src=(\S+)/.exec(line)?.[1])
    .filter((address): address is string => address !== undefined);
}

/** The packet counter of the rule that carries `marker` in `iptables -L -v -n -x` output. */
export function parseRuleCounter(listing: string, marker: string): number {
  const line = listing.split('\n').find((entry) => entry.includes(marker));
  const packets = line?.trim().split(/\s+/)[0];
  return packets !== undefined && /^\d+$/.test(packets) ? Number(packets) : 0;
}

const chainPrefix = 'HAPTIC-EGRESS-';
const cgroupPrefix = 'haptic-egress-';
/** A guard chain's definition in `iptables -S` output, and a guard's cgroup directory. */
const chainDefinition = new RegExp(`^-N ${chainPrefix}(\\d+)$`);
const cgroupName = new RegExp(`^${cgroupPrefix}(\\d+)$`);

/** The run ids of guard chains in `iptables -S` output (`-N HAPTIC-EGRESS-<id>` lines). */
export function guardChainIds(rules: string): string[] {
  return rules
    .split('\n')
    .map((line) => chainDefinition.exec(line.trim())?.[1])
    .filter((id): id is string => id !== undefined);
}

/** Whether process `pid` exists (a guard's id is its pid). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Where the cgroup v2 hierarchy is mounted (`/sys/fs/cgroup` or `/sys/fs/cgroup/unified`). */
function cgroup2Mount(): string {
  const mount = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .find((fields) => fields[2] === 'cgroup2')?.[1];
  if (mount === undefined) {
    throw new Error('The egress guard needs a cgroup v2 hierarchy (none is mounted).');
  }
  return mount;
}

function run(command: string, args: readonly string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) {
    const why = result.error?.message ?? result.stderr.trim();
    throw new Error(`${command} ${args.join(' ')} failed: ${why}`);
  }
  return result.stdout;
}

const families = [
  { tool: 'iptables', suffix: '4' },
  { tool: 'ip6tables', suffix: '6' },
] as const;

export class EgressGuard {
  readonly #chain: string;
  readonly #cgroupPath: string;
  readonly #cgroupDir: string;

  constructor(id: string) {
    this.#chain = `${chainPrefix}${id}`;
    this.#cgroupPath = `${cgroupPrefix}${id}`;
    this.#cgroupDir = join(cgroup2Mount(), this.#cgroupPath);
  }

  /**
   * Removes what guards killed before their own clean-up (SIGKILL, a session stopped hard) left
   * installed: chains, OUTPUT jumps and cgroups whose guard process is gone, with any process
   * of that run still in its cgroup. Returns their ids.
   */
  static async removeStale(): Promise<string[]> {
    const ids = new Set<string>();
    for (const { tool } of families) {
      for (const id of guardChainIds(run(tool, ['-w', '-S']))) ids.add(id);
    }
    for (const entry of readdirSync(cgroup2Mount())) {
      const id = cgroupName.exec(entry)?.[1];
      if (id !== undefined) ids.add(id);
    }
    // A chain named by this guard's own pid is a dead run's (pids are reused), never its own:
    // it installs after this.
    const stale = [...ids].filter((id) => Number(id) === process.pid || !alive(Number(id)));
    for (const id of stale) await new EgressGuard(id).uninstall();
    return stale;
  }

  #list(suffix: string): string {
    return `${this.#cgroupPath}-${suffix}`;
  }

  /** Creates the cgroup and the counting chains. */
  install(): void {
    mkdirSync(this.#cgroupDir);
    for (const { tool, suffix } of families) {
      run(tool, ['-w', '-N', this.#chain]);
      run(tool, ['-w', '-A', this.#chain, '-o', 'lo', '-j', 'RETURN']);
      if (suffix === '4') {
        for (const cidr of clusterCidrs) {
          run(tool, ['-w', '-A', this.#chain, '-d', cidr, '-j', 'RETURN']);
        }
      }
      const inRun = ['-m', 'cgroup', '--path', this.#cgroupPath];
      run(tool, [
        '-w',
        '-A',
        this.#chain,
        ...inRun,
        '-m',
        'recent',
        '--name',
        this.#list(suffix),
        '--rdest',
        '--set',
      ]);
      run(tool, ['-w', '-A', this.#chain, ...inRun, '-j', 'REJECT']);
      run(tool, ['-w', '-I', 'OUTPUT', '1', '-j', this.#chain]);
    }
  }

  /** Runs a command inside the guarded cgroup; resolves with its exit code. */
  run(command: string, args: readonly string[]): Promise<number> {
    const procs = join(this.#cgroupDir, 'cgroup.procs');
    // The shell joins the cgroup, then becomes the command: everything it starts is inside.
    const child = spawn('sh', ['-c', 'echo $$ > "$0" && exec "$@"', procs, command, ...args], {
      stdio: 'inherit',
    });
    const forward = (signal: NodeJS.Signals): void => {
      child.kill(signal);
    };
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    return new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        process.off('SIGINT', forward);
        process.off('SIGTERM', forward);
        resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
      });
    });
  }

  /** What was counted so far. */
  report(): EgressReport {
    let packets = 0;
    const destinations: string[] = [];
    for (const { tool, suffix } of families) {
      const listing = run(tool, ['-w', '-L', this.#chain, '-v', '-n', '-x']);
      packets += parseRuleCounter(listing, `name: ${this.#list(suffix)}`);
      const recent = `/proc/net/xt_recent/${this.#list(suffix)}`;
      if (existsSync(recent)) destinations.push(...parseRecentList(readFileSync(recent, 'utf8')));
    }
    return { packets, destinations };
  }

  /**
   * Removes chains and cgroup. Processes the command left behind in the cgroup are stopped
   * first (they are the run's, and would keep the cgroup alive).
   */
  async uninstall(): Promise<void> {
    for (const { tool } of families) {
      spawnSync(tool, ['-w', '-D', 'OUTPUT', '-j', this.#chain]);
      spawnSync(tool, ['-w', '-F', this.#chain]);
      spawnSync(tool, ['-w', '-X', this.#chain]);
    }
    if (!existsSync(this.#cgroupDir)) return;
    const procs = join(this.#cgroupDir, 'cgroup.procs');
    const members = (): number[] =>
      readFileSync(procs, 'utf8')
        .split('\n')
        .map(Number)
        // 0 stands for a process of another pid namespace; kill(0) would signal our own group.
        .filter((pid) => pid > 0);
    const deadline = Date.now() + 5_000;
    while (members().length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const pid of members()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    while (members().length > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    rmdirSync(this.#cgroupDir);
  }
}

/** The failure message: how many packets, to where, and what to do. */
export function describeEgress(report: EgressReport): string {
  const where = report.destinations.length > 0 ? report.destinations.join(', ') : 'unknown';
  return `${report.packets} packet(s) from the guarded run were addressed off this machine (the guard stopped them), to: ${where}. Nothing the suite starts may reach an address other than loopback or the local cluster's own ranges; find the caller of that address.`;
}
