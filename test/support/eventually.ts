import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Reads `read()` every 100 ms until `ok` holds for its value, and returns that value; throws
 * after `ms` naming `what`, the last value and the last error. The one way integration tests
 * wait for the cluster: on a condition, never for a fixed time.
 */
export async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  let error: unknown;
  while (Date.now() < deadline) {
    try {
      last = await read();
      if (ok(last)) return last;
    } catch (caught) {
      error = caught;
    }
    await sleep(100);
  }
  throw new Error(
    `${what} did not happen within ${String(ms)} ms: last ${JSON.stringify(last)} ${error instanceof Error ? error.message : ''}`,
  );
}
