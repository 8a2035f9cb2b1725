/**
 * Server slot changes through HAProxy's runtime API on the current worker, over the master
 * socket (`@1 set server …`: the master sends `@1` to the worker of the current configuration,
 * the only one since HAProxy 2.5 runs one worker), then read back with `show servers state` of
 * the backends changed (HAProxy answers a line's commands in order, so the read-back sees them
 * done). No process list is asked first: its round trip to the master was the longest part of
 * a runtime change on the real node. Commands go in lines of at most `maxLineBytes` (HAProxy's
 * CLI reads one buffer per line), `;`-separated. Old workers keep the configuration they were
 * started with and only finish their connections.
 */
import { type ServerChange, serverCommands } from '../haproxy/runtime-changes.ts';
import { describeError } from '../errors.ts';
import type { MasterSocket } from './master-socket.ts';
import { parseServerStates, serverStateMismatch } from './server-state.ts';

/** Longest command line sent to the master CLI. @default 8,000 bytes (HAProxy's bufsize is 16 KB) */
const maxLineBytes = 8_000;

/** Groups commands into lines of at most `maxLineBytes` once `;`-joined. */
function commandLines(commands: readonly string[]): string[][] {
  const lines: string[][] = [];
  let line: string[] = [];
  let length = 0;
  for (const command of commands) {
    if (line.length > 0 && length + 2 + command.length > maxLineBytes) {
      lines.push(line);
      line = [];
      length = 0;
    }
    length += (line.length > 0 ? 2 : 0) + command.length;
    line.push(command);
  }
  if (line.length > 0) lines.push(line);
  return lines;
}

async function send(master: MasterSocket, commands: readonly string[]): Promise<string> {
  const answers: string[] = [];
  for (const line of commandLines(commands)) answers.push(await master.commands(line));
  return answers.join('\n');
}

/**
 * Applies `changes` to the current worker and verifies them. Returns undefined when the worker
 * shows every change, or a sentence saying what failed (the caller then reloads).
 */
export async function updateServers(
  master: MasterSocket,
  changes: readonly ServerChange[],
): Promise<string | undefined> {
  const backends = [...new Set(changes.map((change) => change.backend))];
  try {
    // The read-back follows the commands on the same line when they fit: one round trip.
    const states = parseServerStates(
      await send(
        master,
        [
          ...changes.flatMap(serverCommands),
          ...backends.map((backend) => `show servers state ${backend}`),
        ].map((command) => `@1 ${command}`),
      ),
    );
    for (const change of changes) {
      const mismatch = serverStateMismatch(states, change);
      if (mismatch !== undefined) return `the current worker: ${mismatch}`;
    }
  } catch (error) {
    return describeError(error);
  }
  return undefined;
}
