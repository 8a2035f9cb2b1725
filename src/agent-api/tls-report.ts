/**
 * What one peer has loaded for the mTLS link, as the agent reports it in `GET /v1/state`
 * (`tls.loaded`) and the controller records it for itself and every agent. Fingerprints are
 * the SHA-256 of the certificate's DER in lower-case hex (64 digits, no colons), so they can
 * be compared with `openssl x509 -noout -fingerprint -sha256 | tr -d : | tr A-F a-f`.
 *
 * `parseTlsReport` reads one from untrusted JSON: every field typed and bounded; a malformed
 * report is a problem naming the field, never an exception.
 */
import { parseUtcTimestamp } from '../secrets/utc-timestamp.ts';
import { isRecord } from '../is-record.ts';

export interface TlsReportLeaf {
  /** Serial number, lower-case hex without leading separators. */
  readonly serial: string;
  /** The DNS names of the subject alternative name extension. */
  readonly dnsNames: readonly string[];
  /** RFC 3339 UTC. */
  readonly notAfter: string;
}

export interface TlsReport {
  /** The `..data` revision of the mounted Secret directory; null for a plain directory. */
  readonly revision: string | null;
  /** Whether the material may be used now (see `materialStatusAt`). */
  readonly valid: boolean;
  /** The reason code when it may not. */
  readonly reason: string | null;
  /** Fingerprints of ca.crt, in file order. */
  readonly caFingerprints: readonly string[];
  /** Fingerprints of previous-ca.crt while previous trust is in force; otherwise empty. */
  readonly previousCaFingerprints: readonly string[];
  /** The previous-CA deadline while previous trust is in force; otherwise null. */
  readonly previousCaUntil: string | null;
  /** tls.crt's own certificate; null when the directory could not be decoded. */
  readonly leaf: TlsReportLeaf | null;
  /** When these bytes were first read. */
  readonly loadedAt: string;
}

/** Bounds of a report: more is refused, so a peer cannot make the controller record much. */
export const tlsReportLimits = {
  certificates: 16,
  dnsNames: 16,
  dnsNameLength: 253,
  revisionLength: 253,
  serialLength: 64,
  reasonLength: 64,
} as const;

export type TlsReportParse =
  | { readonly ok: true; readonly report: TlsReport }
  | { readonly ok: false; readonly field: string; readonly message: string };

class ReportFieldError extends Error {
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

const fingerprintPattern = /^[0-9a-f]{64}$/;
const serialPattern = /^[0-9a-f]+$/;
const reasonPattern = /^[A-Za-z][A-Za-z0-9]*$/;
const revisionPattern = /^[\x21-\x7e]+$/;

function fail(field: string, expected: string): never {
  throw new ReportFieldError(field, `${field} must be ${expected}`);
}

function record(value: unknown, field: string): Record<string, unknown> {
  if (!isRecord(value)) fail(field, 'an object');
  return value;
}

function boundedString(
  value: unknown,
  field: string,
  pattern: RegExp,
  maxLength: number,
  expected: string,
): string {
  if (typeof value !== 'string' || value.length > maxLength || !pattern.test(value))
    fail(field, expected);
  return value;
}

/**
 * A nullable field: null or absent means none (a JSON merge patch, as the controllers write the
 * HAProxyTemplateConfig status, stores a null by removing the key).
 */
function orNull<T>(value: unknown, read: (value: unknown) => T): T | null {
  return value === null || value === undefined ? null : read(value);
}

function timestamp(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length > 40 || parseUtcTimestamp(value) === undefined)
    fail(field, 'an RFC 3339 UTC time such as 2030-03-01T12:00:00Z');
  return value;
}

function list<T>(
  value: unknown,
  field: string,
  max: number,
  read: (item: unknown, field: string) => T,
): T[] {
  if (!Array.isArray(value) || value.length > max) fail(field, `a list of at most ${max} entries`);
  return value.map((item: unknown, index) => read(item, `${field}[${index}]`));
}

function fingerprint(value: unknown, field: string): string {
  return boundedString(value, field, fingerprintPattern, 64, '64 lower-case hex digits (SHA-256)');
}

function leaf(value: unknown, field: string): TlsReportLeaf {
  const body = record(value, field);
  const { dnsNames, dnsNameLength, serialLength } = tlsReportLimits;
  return {
    serial: boundedString(
      body.serial,
      `${field}.serial`,
      serialPattern,
      serialLength,
      `lower-case hex of at most ${serialLength} digits`,
    ),
    dnsNames: list(body.dnsNames, `${field}.dnsNames`, dnsNames, (item, at) =>
      boundedString(
        item,
        at,
        /^[\x21-\x7e]+$/,
        dnsNameLength,
        `a DNS name of at most ${dnsNameLength} characters`,
      ),
    ),
    notAfter: timestamp(body.notAfter, `${field}.notAfter`),
  };
}

/** Reads a report from untrusted JSON; `field` names where it was found, e.g. `tls.loaded`. */
export function parseTlsReport(value: unknown, field: string): TlsReportParse {
  try {
    const body = record(value, field);
    const { certificates, revisionLength, reasonLength } = tlsReportLimits;
    if (typeof body.valid !== 'boolean') fail(`${field}.valid`, 'true or false');
    const report: TlsReport = {
      revision: orNull(body.revision, (revision) =>
        boundedString(
          revision,
          `${field}.revision`,
          revisionPattern,
          revisionLength,
          `null or a directory name of at most ${revisionLength} characters`,
        ),
      ),
      valid: body.valid,
      reason: orNull(body.reason, (reason) =>
        boundedString(
          reason,
          `${field}.reason`,
          reasonPattern,
          reasonLength,
          `null or a reason code of at most ${reasonLength} characters`,
        ),
      ),
      caFingerprints: list(
        body.caFingerprints,
        `${field}.caFingerprints`,
        certificates,
        fingerprint,
      ),
      previousCaFingerprints: list(
        body.previousCaFingerprints,
        `${field}.previousCaFingerprints`,
        certificates,
        fingerprint,
      ),
      previousCaUntil: orNull(body.previousCaUntil, (until) =>
        timestamp(until, `${field}.previousCaUntil`),
      ),
      leaf: orNull(body.leaf, (value) => leaf(value, `${field}.leaf`)),
      loadedAt: timestamp(body.loadedAt, `${field}.loadedAt`),
    };
    return { ok: true, report };
  } catch (error) {
    if (error instanceof ReportFieldError)
      return { ok: false, field: error.field, message: error.message };
    throw error;
  }
}
