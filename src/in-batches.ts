/**
 * Runs `task` over `items` `size` at a time (a set of files may hold thousands: one open file
 * each). Every task of a batch ends before a failure is thrown, so a caller's clean-up never
 * runs beside one of them.
 */
export async function inBatches<T>(
  items: readonly T[],
  size: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  for (let start = 0; start < items.length; start += size) {
    const settled = await Promise.allSettled(items.slice(start, start + size).map(task));
    for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
  }
}
