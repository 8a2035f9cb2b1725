/** RFC 3339 timestamps in UTC (`2030-03-01T12:00:00Z`), the form of `previous-ca-until`. */

const pattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;

/** Parses an RFC 3339 UTC timestamp; anything else (offsets, lower-case, invalid dates) is undefined. */
export function parseUtcTimestamp(text: string): Date | undefined {
  const match = pattern.exec(text);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number);
  const date = new Date(text);
  const valid =
    !Number.isNaN(date.getTime()) &&
    date.getUTCFullYear() === year &&
    date.getUTCMonth() + 1 === month &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  return valid ? date : undefined;
}

/** Formats a date as an RFC 3339 UTC timestamp with whole seconds. */
export function formatUtcTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
