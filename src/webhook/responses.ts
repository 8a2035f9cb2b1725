/**
 * Admission answers, built in one place: allowed, denied (a rule said no), errored (validation
 * itself failed), and warnings. Validators return reports; only this module shapes responses.
 */
import type { Finding, ValidationReport } from '../validation/index.ts';
import type { AdmissionResponse, AdmissionStatusCause } from './admission-review.ts';

/** Longest warning sent: kubectl prints each on one line. @default 120 */
export const maxWarningLength = 120;

/** Most warnings sent per answer. @default 5 */
export const maxWarnings = 5;

export function allowed(uid: string): AdmissionResponse {
  return { uid, allowed: true };
}

/** A rule said no: 403 Forbidden with the sentences, and each reason as a cause when given. */
export function denied(
  uid: string,
  message: string,
  code = 403,
  causes: readonly AdmissionStatusCause[] = [],
): AdmissionResponse {
  const details = causes.length === 0 ? {} : { details: { causes } };
  return { uid, allowed: false, status: { code, reason: 'Forbidden', message, ...details } };
}

export function errored(uid: string, code: number, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { code, message } };
}

function shorten(text: string): string {
  if (text.length <= maxWarningLength) return text;
  const cut = text.slice(0, maxWarningLength - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > maxWarningLength / 2 ? cut.slice(0, space) : cut}…`;
}

export function withWarnings(
  response: AdmissionResponse,
  warnings: readonly string[],
): AdmissionResponse {
  if (warnings.length === 0) return response;
  return { ...response, warnings: warnings.slice(0, maxWarnings).map(shorten) };
}

function sentences(findings: readonly Finding[]): string {
  const [first, ...rest] = findings;
  if (first === undefined) return '';
  if (rest.length === 0) return first.message;
  return findings.map((finding) => `- ${finding.message}`).join('\n');
}

/**
 * The answer for a validation report: denied with every error (sentences in the message, and
 * code, path and sentence of each as a cause), warnings either way.
 */
export function fromReport(uid: string, report: ValidationReport): AdmissionResponse {
  const errors = report.findings.filter((finding) => finding.severity === 'error');
  const warnings = report.findings
    .filter((finding) => finding.severity === 'warning')
    .map((finding) => finding.message);
  const causes = errors.map(({ code, path, message }) => ({ reason: code, field: path, message }));
  const answer = report.allowed ? allowed(uid) : denied(uid, sentences(errors), 403, causes);
  return withWarnings(answer, warnings);
}
