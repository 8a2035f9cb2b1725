/**
 * HAProxy's `show servers state` output, read for the slots a runtime update changed. Pure.
 * The format (version 1) is one line per server; the fields used here are by position:
 *
 *   1
 *   # be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state … srv_port …
 *   2 web 2 s2 10.0.0.7 2 4 1 1 0 1 0 0 8 0 0 0 - 8080 - 0 0 - - 0
 */
import type { ServerChange } from '../haproxy/runtime-changes.ts';

export interface ServerState {
  readonly address: string;
  readonly port: number;
  /** `srv_admin_state` has the forced-maintenance bit (`set server … state maint`, `disabled`). */
  readonly maint: boolean;
}

const field = { backend: 1, server: 3, address: 4, admin: 6, port: 18 } as const;
/** SRV_ADMF_FMAINT in HAProxy's srv_admin_state. */
const forcedMaintenance = 0x01;

/** Server states by `backend/server`, from any number of concatenated answers. */
export function parseServerStates(output: string): Map<string, ServerState> {
  const states = new Map<string, ServerState>();
  for (const line of output.split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words.length <= field.port || words[0]?.startsWith('#') !== false) continue;
    const admin = Number(words[field.admin]);
    const port = Number(words[field.port]);
    if (!Number.isInteger(admin) || !Number.isInteger(port)) continue;
    states.set(`${words[field.backend]}/${words[field.server]}`, {
      address: words[field.address] ?? '',
      port,
      maint: (admin & forcedMaintenance) !== 0,
    });
  }
  return states;
}

/** The canonical text of an IP address (HAProxy prints IPv6 compressed, in lower case). */
function canonicalAddress(address: string): string {
  if (!address.includes(':')) return address;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

/** Why `states` does not show `change` in force, or undefined when it does. */
export function serverStateMismatch(
  states: ReadonlyMap<string, ServerState>,
  change: ServerChange,
): string | undefined {
  const target = `${change.backend}/${change.server}`;
  const state = states.get(target);
  if (state === undefined) return `HAProxy does not list the server ${target}`;
  const want = `${canonicalAddress(change.address)}:${change.port} ${change.state}`;
  const has = `${canonicalAddress(state.address)}:${state.port} ${state.maint ? 'maint' : 'ready'}`;
  return want === has ? undefined : `the server ${target} is ${has}, not ${want}`;
}
