/**
 * Server slot changes through HAProxy's runtime API, on every current worker, over the master
 * socket (`@!<pid> set server …`), then read back with `show servers state` of the backends
 * changed (HAProxy answers a line's commands in order, so the read-back sees them done).
 * Commands go in lines of at most `maxLineBytes` (HAProxy's CLI reads one buffer per line),
 * `;`-separated. Old workers keep the configuration they were started with and only
 * finish their connections.
 */
import { type ServerChange, serverCommands } from '../agent-api/runtime-changes.ts';
import { describeError } from '../errors.ts';
import type { MasterSocket } from './master-socket.ts';
import type { ProcessList } from './process-list.ts';
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
 * Applies `changes` to every current worker and verifies them. Returns undefined when every
 * worker shows every change, or a sentence saying what failed (the caller then reloads).
 */
export async function updateServers(
  master: MasterSocket,
  processes: ProcessList,
  changes: readonly ServerChange[],
): Promise<string | undefined> {
  if (processes.workers.length === 0) return 'HAProxy has no current worker to update';
  const backends = [...new Set(changes.map((change) => change.backend))];
  try {
    for (const worker of processes.workers) {
      const at = `@!${worker.pid} `;
      // The read-back follows the commands on the same line when they fit: one round trip.
      const states = parseServerStates(
        await send(
          master,
          [
            ...changes.flatMap(serverCommands),
            ...backends.map((backend) => `show servers state ${backend}`),
          ].map((command) => at + command),
        ),
      );
      for (const change of changes) {
        const mismatch = serverStateMismatch(states, change);
        if (mismatch !== undefined) return `worker ${worker.pid}: ${mismatch}`;
      }
    }
  } catch (error) {
    return describeError(error);
  }
  return undefined;
}
