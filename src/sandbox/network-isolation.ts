/**
 * How `haproxy -c` is cut off from the network. HAProxy resolves the names a configuration
 * holds while it parses it (`server`, `bind`, `log`, `addr`, `nameserver`, ACL `src` patterns,
 * `option forwardfor except`, names in pattern files, ...), so a check that could reach a DNS
 * server would send other tenants' host names to it. Each check therefore runs behind one of:
 *
 * - `seccomp`: `haptic-no-network` (tools/no-network), a filter that fails every system call
 *   that would send or receive over a socket. It needs no privilege, so it works in the chart's
 *   config-check container (non-root, every capability dropped, the runtime's default seccomp
 *   profile), where a network namespace of its own is refused (unshare needs CAP_SYS_ADMIN
 *   under that profile). The image carries it in /usr/local/bin; `make setup` builds it into
 *   .tools/bin.
 * - `namespace`: `unshare --net --map-current-user` (util-linux), a network namespace with
 *   only a loopback interface that is down, for machines without the helper whose kernel lets
 *   users create namespaces (local `haptic config check`).
 *
 * `auto` tries them in that order; the sandbox starts only once one of them runs `haproxy -v`,
 * and never checks without one.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export type NetworkIsolationKind = 'seccomp' | 'namespace';

export type NetworkIsolationChoice = NetworkIsolationKind | 'auto';

export const networkIsolationChoices: readonly NetworkIsolationChoice[] = [
  'auto',
  'seccomp',
  'namespace',
];

/** The helper behind `seccomp`, looked up on the sandbox's PATH. */
export const noNetworkHelper = 'haptic-no-network';

export interface NetworkIsolation {
  readonly kind: NetworkIsolationKind;
  /** Command and arguments that run the rest of the command line without network. */
  readonly command: readonly string[];
}

/** The `unshare` command line of `namespace` (found on the check's PATH). */
export const namespaceCommand: readonly string[] = ['unshare', '--net', '--map-current-user', '--'];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` in the directories of `path` (a PATH value), or undefined. */
export function findExecutable(name: string, path: string): string | undefined {
  return path
    .split(delimiter)
    .filter((directory) => directory.startsWith('/'))
    .map((directory) => join(directory, name))
    .find(isExecutable);
}

/** A candidate that cannot be tried, and why. */
export interface UnavailableIsolation {
  readonly kind: NetworkIsolationKind;
  readonly problem: string;
}

/** The isolations `choice` allows, in the order they are tried, from the sandbox's `path`. */
export function isolationCandidates(
  choice: NetworkIsolationChoice,
  path: string,
): (NetworkIsolation | UnavailableIsolation)[] {
  const candidates: (NetworkIsolation | UnavailableIsolation)[] = [];
  if (choice !== 'namespace') {
    const helper = findExecutable(noNetworkHelper, path);
    candidates.push(
      helper === undefined
        ? {
            kind: 'seccomp',
            problem: `${noNetworkHelper} is not on PATH (the image has it; make setup builds it into .tools/bin)`,
          }
        : { kind: 'seccomp', command: [helper, '--'] },
    );
  }
  if (choice !== 'seccomp') candidates.push({ kind: 'namespace', command: namespaceCommand });
  return candidates;
}

/** What running a command line gave: its exit code (undefined when it did not start). */
export interface TrialResult {
  readonly exitCode: number | undefined;
  readonly message: string;
}

/**
 * The first candidate under which `trial` (e.g. `haproxy -v` behind it) succeeds, or an error
 * message naming why each failed.
 */
export async function selectNetworkIsolation(
  choice: NetworkIsolationChoice,
  path: string,
  trial: (isolation: NetworkIsolation) => Promise<TrialResult>,
): Promise<NetworkIsolation | { readonly problem: string }> {
  const problems: string[] = [];
  for (const candidate of isolationCandidates(choice, path)) {
    if ('problem' in candidate) {
      problems.push(`${candidate.kind}: ${candidate.problem}`);
      continue;
    }
    const result = await trial(candidate);
    if (result.exitCode === 0) return candidate;
    problems.push(
      `${candidate.kind}: ${result.message.trim() || `exit ${String(result.exitCode)}`}`,
    );
  }
  return {
    problem: `haproxy -c cannot be cut off from the network, so the check sandbox does not start (${problems.join('; ')})`,
  };
}

/**
 * Whether a check's output is the isolation's own complaint that it could not start the
 * command (rather than HAProxy's output, which starts with `[NOTICE]` or `[ALERT]`).
 */
export function isolationFailed(output: string): boolean {
  return output.startsWith(`${noNetworkHelper}: `) || output.startsWith('unshare: ');
}
