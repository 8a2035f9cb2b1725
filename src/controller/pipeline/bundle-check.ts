/**
 * `haproxy -c` on a complete set of rendered files, in the check sandbox the agents use too
 * (`--check-socket`): the files travel in the agents' apply format and are laid out there in a
 * fresh private directory exactly as in the agents' base directory. Messages name files as the
 * agents do (haproxy.cfg:47).
 */
import { type CheckOptions, checkHAProxyConfig } from '../../sandbox/check-client.ts';
import type { CheckOutcome } from '../../sandbox/sandbox-protocol.ts';
import type { ApplyFile } from '../../agent-api/apply-encoding.ts';

export type BundleCheckOptions = CheckOptions;

export function checkBundle(
  files: readonly ApplyFile[],
  options: BundleCheckOptions,
): Promise<CheckOutcome> {
  return checkHAProxyConfig(files, options);
}
