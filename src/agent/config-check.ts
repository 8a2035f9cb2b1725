/**
 * `haproxy -c` on a complete set of files, for HAProxy's own message. The configuration is
 * hostile input (linted before this runs), so HAProxy never parses it here: the files go to
 * the check sandbox (`haptic sandbox serve`, the `config-check` container beside this one),
 * which holds nothing worth stealing and runs the check under time and memory limits.
 * HAProxy's output is reduced inside the sandbox, before it reaches status, Events, logs or
 * answers.
 */
import { type CheckFile, requestSandboxCheck } from '../sandbox/check-client.ts';
import type { CheckOutcome } from '../sandbox/sandbox-protocol.ts';

export type { CheckOutcome };

export interface CheckOptions {
  /** The check sandbox's Unix socket (`--check-socket`). */
  readonly socket: string;
  /** Longest wait for the sandbox's answer. @default 60 seconds */
  readonly timeoutMs?: number;
}

/** Checks the complete set of files (haproxy.cfg and every file it names) in the sandbox. */
export async function checkHAProxyConfig(
  files: readonly CheckFile[],
  options: CheckOptions,
): Promise<CheckOutcome> {
  // The sandbox answers with HAProxy's output already reduced to file:line, keyword and reason.
  return requestSandboxCheck(files, options);
}
