/**
 * `haproxy -c` on a complete set of files, for HAProxy's own message. The configuration is
 * hostile input (linted before this runs), so HAProxy never parses it here: the files go to
 * the check sandbox (`haptic sandbox serve`, the `config-check` container beside this one),
 * which holds nothing worth stealing and runs the check under time and memory limits.
 * HAProxy's output is reduced here, before it reaches status, Events, logs or answers.
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

/** Largest message kept from HAProxy's output. */
const maxMessageChars = 8_000;

/** HAProxy's alert and warning lines, without PIDs and start-up notices. */
export function haproxyMessage(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.replace(/^\[(\w+)\]\s+\(\d+\)\s*:\s*/, '[$1] ').trimEnd())
    .filter((line) => line !== '' && !line.startsWith('[NOTICE]'));
  const text = lines.join('\n');
  return text.length > maxMessageChars ? `${text.slice(0, maxMessageChars)}…` : text;
}

/** Checks the complete set of files (haproxy.cfg and every file it names) in the sandbox. */
export async function checkHAProxyConfig(
  files: readonly CheckFile[],
  options: CheckOptions,
): Promise<CheckOutcome> {
  const outcome = await requestSandboxCheck(files, options);
  return outcome.ok || outcome.failure === 'unavailable'
    ? outcome
    : { ...outcome, message: haproxyMessage(outcome.message) };
}
