/** `haptic certificates status`, the output: a table (one row per Pod) or JSON. Pure. */
import { formatDuration } from '../certs/duration-text.ts';
import type { StatusRow } from '../certs/status-rows.ts';
import { shortFingerprint } from '../pki/fingerprint.ts';

const headers = [
  'POD',
  'ROLE',
  'CA',
  'SECRET',
  'ISSUER',
  'PREVIOUS CA',
  'LEAF EXPIRES',
  'LAST EXCHANGE',
  'STATUS',
] as const;

function yesNo(value: boolean | null): string {
  return value === null ? '-' : value ? 'yes' : 'no';
}

function cells(row: StatusRow, now: Date): string[] {
  const previous =
    row.previousCas.length === 0
      ? '-'
      : `${row.previousCas.map(shortFingerprint).join(',')} (${
          row.previousCaLeftMs === null || row.previousCaLeftMs <= 0
            ? 'expired'
            : `${formatDuration(row.previousCaLeftMs)} left`
        })`;
  const exchange =
    row.lastExchange === null
      ? '-'
      : `${formatDuration(now.getTime() - Date.parse(row.lastExchange))} ago`;
  return [
    row.pod,
    row.role,
    row.loadedCas.length === 0 ? '-' : row.loadedCas.map(shortFingerprint).join(','),
    yesNo(row.loadedCas.length === 0 ? false : row.matchesSecret),
    yesNo(row.matchesIssuer),
    previous,
    row.leafNotAfter ?? '-',
    exchange,
    row.converged ? 'converged' : `not converged: ${row.problems.join('; ')}`,
  ];
}

/** Columns padded to their widest cell; the last column is not padded. */
export function formatStatusTable(rows: readonly StatusRow[], now: Date): string {
  const lines = [[...headers], ...rows.map((row) => cells(row, now))];
  const widths = headers.map((_, column) =>
    Math.max(...lines.map((line) => (line[column] ?? '').length)),
  );
  return lines
    .map((line) =>
      line
        .map((cell, column) =>
          column === line.length - 1 ? cell : cell.padEnd(widths[column] ?? 0),
        )
        .join('  '),
    )
    .join('\n');
}

export interface StatusDocument {
  readonly namespace: string;
  readonly release: string;
  readonly within: string;
  readonly converged: boolean;
  readonly pods: readonly StatusRow[];
}

export function formatStatusJson(document: StatusDocument): string {
  return JSON.stringify(document, null, 2);
}
