/**
 * One Pod's entry in the HAProxyTemplateConfig status (`status.tls.<pod>`): what it has loaded
 * for the mTLS link and when the link last worked. Every controller replica writes its own
 * entry; the leader writes every agent's from its answers to `GET /v1/state`.
 * `parseTlsStateEntry` reads one back (the CLI): typed and bounded, problems name the field.
 */
import { type TlsReport, parseTlsReport } from '../agent-api/tls-report.ts';
import { parseUtcTimestamp } from '../secrets/utc-timestamp.ts';

/** Where the entries live in the HAProxyTemplateConfig. */
export const tlsStatusField = 'tls';

export type TlsPeerRole = 'controller' | 'agent';

export interface TlsStateEntry {
  readonly role: TlsPeerRole;
  /** What the Pod has loaded; null when it did not say (unreachable, malformed answer). */
  readonly loaded: TlsReport | null;
  /** Why `loaded` is null, as a sentence; null otherwise. */
  readonly error: string | null;
  /**
   * Last successful mTLS exchange (RFC 3339 UTC): for an agent, the leader's last answered
   * state request or apply; for a controller, its own last answered request to any agent.
   */
  readonly lastExchange: string | null;
  /** Who wrote the entry (a controller Pod) and when. */
  readonly reportedBy: string;
  readonly reportedAt: string;
}

export type TlsStateEntryParse =
  | { readonly ok: true; readonly entry: TlsStateEntry }
  | { readonly ok: false; readonly field: string; readonly message: string };

const maxText = 1024;

/**
 * Null and absent are the same here: the controllers write entries with JSON merge patches,
 * which store a null by removing the key.
 */
const isNone = (value: unknown): value is null | undefined => value === null || value === undefined;

function optionalTimestamp(value: unknown): string | null | undefined {
  if (isNone(value)) return null;
  return typeof value === 'string' && parseUtcTimestamp(value) !== undefined ? value : undefined;
}

export function parseTlsStateEntry(value: unknown, field: string): TlsStateEntryParse {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, field, message: `${field} must be an object` };
  const body = value as Record<string, unknown>;
  const bad = (name: string, expected: string): TlsStateEntryParse => ({
    ok: false,
    field: `${field}.${name}`,
    message: `${field}.${name} must be ${expected}`,
  });
  if (body.role !== 'controller' && body.role !== 'agent')
    return bad('role', 'controller or agent');
  let loaded: TlsReport | null = null;
  if (!isNone(body.loaded)) {
    const parsed = parseTlsReport(body.loaded, `${field}.loaded`);
    if (!parsed.ok) return parsed;
    loaded = parsed.report;
  }
  const error = isNone(body.error) ? null : body.error;
  if (error !== null && (typeof error !== 'string' || error.length > maxText))
    return bad('error', `null or a sentence of at most ${maxText} characters`);
  const lastExchange = optionalTimestamp(body.lastExchange);
  if (lastExchange === undefined) return bad('lastExchange', 'null or an RFC 3339 UTC time');
  const reportedAt = optionalTimestamp(body.reportedAt);
  if (reportedAt === undefined || reportedAt === null)
    return bad('reportedAt', 'an RFC 3339 UTC time');
  if (typeof body.reportedBy !== 'string' || body.reportedBy.length > 253)
    return bad('reportedBy', 'a Pod name');
  return {
    ok: true,
    entry: {
      role: body.role,
      loaded,
      error,
      lastExchange,
      reportedBy: body.reportedBy,
      reportedAt,
    },
  };
}
