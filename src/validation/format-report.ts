/** A validation report as the pre-rollout Job prints it: text for logs, or JSON for tools. */
import type { Finding, ValidationReport } from './finding.ts';

export type ReportFormat = 'text' | 'json';

function line(finding: Finding): string {
  return `${finding.severity.toUpperCase()} ${finding.code} (${finding.path}): ${finding.message}`;
}

/** The report for `--output`; `subject` names what was validated (`release haptic in haptic`). */
export function formatReport(
  report: ValidationReport,
  format: ReportFormat,
  subject: string,
): string {
  if (format === 'json') {
    return `${JSON.stringify({ subject, allowed: report.allowed, findings: report.findings }, null, 2)}\n`;
  }
  const errors = report.findings.filter((f) => f.severity === 'error').length;
  const verdict = report.allowed
    ? `accepted ${subject}`
    : `rejected ${subject}: ${errors} problem${errors === 1 ? '' : 's'}`;
  return [...report.findings.map(line), `preflight ${verdict}.`].join('\n') + '\n';
}
