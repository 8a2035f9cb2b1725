/** Durations as operators type them on a command line: `30d`, `720h`, `1d12h`, `90m`, `3600s`. */

const unitMs = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 } as const;
const pattern = /^(?:\d+[dhms])+$/;
const part = /(\d+)([dhms])/g;

/** Milliseconds of a duration such as `30d` or `1d12h`; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!pattern.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount = '0', unit = 's'] of trimmed.matchAll(part)) {
    total += Number(amount) * unitMs[unit as keyof typeof unitMs];
  }
  return Number.isSafeInteger(total) ? total : undefined;
}

/** A duration as days and hours (`365d 0h`), minutes and seconds below an hour (`59m 30s`). */
export function formatDuration(ms: number): string {
  const seconds = Math.floor(Math.abs(ms) / 1000);
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  if (days > 0 || hours > 0) return `${days}d ${hours}h`;
  return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
}
