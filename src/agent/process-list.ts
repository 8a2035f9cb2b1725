/**
 * HAProxy's master CLI `show proc` output, parsed. Pure. The 2.6 format:
 *
 *   #<PID>          <type>          <reloads>       <uptime>        <version>
 *   17409           master          2 [failed: 1]   0d00h20m12s     2.6.12
 *   # workers
 *   21505           worker          1               0d00h00m01s     2.6.12
 *   # old workers
 *   17419           worker          2               0d00h01m05s     2.6.12
 *   # programs
 */

export interface HAProxyProcess {
  readonly pid: number;
  /** Reloads this process has lived through. */
  readonly reloads: number;
  readonly uptime: string;
  readonly version: string;
}

export interface ProcessList {
  readonly master: HAProxyProcess & {
    /** Failed reloads since the last successful one; 0 after a success. */
    readonly failedReloads: number;
  };
  /** Workers of the current configuration. */
  readonly workers: readonly HAProxyProcess[];
  /** Workers of earlier configurations, still finishing their connections. */
  readonly oldWorkers: readonly HAProxyProcess[];
}

const masterPattern = /^(\d+)\s+master\s+(\d+)(?:\s+\[failed:\s*(\d+)\])?\s+(\S+)\s+(\S+)/;
const workerPattern = /^(\d+)\s+worker\s+(\d+)\s+(\S+)\s+(\S+)/;

/** Parses `show proc`; undefined when the output has no master line. */
export function parseProcessList(output: string): ProcessList | undefined {
  let master: ProcessList['master'] | undefined;
  const workers: HAProxyProcess[] = [];
  const oldWorkers: HAProxyProcess[] = [];
  let section: 'workers' | 'old' | 'other' = 'other';
  for (const raw of output.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#')) {
      const title = line.slice(1).trim();
      section = title === 'workers' ? 'workers' : title === 'old workers' ? 'old' : 'other';
      continue;
    }
    const masterMatch = masterPattern.exec(line);
    if (masterMatch !== null) {
      const [, pid = '', reloads = '', failed = '0', uptime = '', version = ''] = masterMatch;
      master = {
        pid: Number(pid),
        reloads: Number(reloads),
        failedReloads: Number(failed),
        uptime,
        version,
      };
      continue;
    }
    const workerMatch = workerPattern.exec(line);
    if (workerMatch !== null && section !== 'other') {
      const [, pid = '', reloads = '', uptime = '', version = ''] = workerMatch;
      const worker = { pid: Number(pid), reloads: Number(reloads), uptime, version };
      (section === 'workers' ? workers : oldWorkers).push(worker);
    }
  }
  return master === undefined ? undefined : { master, workers, oldWorkers };
}
