import { describe, expect, it } from 'vitest';
import { formatReport } from './format-report.ts';

const report = {
  allowed: false,
  findings: [
    { code: 'KeyMismatch', severity: 'error', path: 'secret/a/tls.key', message: 'Fix it.' },
    {
      code: 'PreviousTrustExpired',
      severity: 'warning',
      path: 'secret/a/previous-ca-until',
      message: 'Clean up.',
    },
  ],
} as const;

describe('formatReport', () => {
  it('prints one line per finding and the verdict', () => {
    expect(formatReport(report, 'text', 'release haptic in namespace haptic')).toBe(
      'ERROR KeyMismatch (secret/a/tls.key): Fix it.\n' +
        'WARNING PreviousTrustExpired (secret/a/previous-ca-until): Clean up.\n' +
        'preflight rejected release haptic in namespace haptic: 1 problem.\n',
    );
  });

  it('prints JSON for tools', () => {
    expect(JSON.parse(formatReport(report, 'json', 'r'))).toEqual({ subject: 'r', ...report });
  });
});
