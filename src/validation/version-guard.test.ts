import { describe, expect, it } from 'vitest';
import { checkChartVersion } from './version-guard.ts';

describe('version guard', () => {
  it('passes when the installed chart is the embedded one', () => {
    expect(checkChartVersion({ embedded: '0.3.0', expected: '0.3.0' })).toBeUndefined();
  });

  it('ignores build metadata, as SemVer does (Flux appends the OCI digest)', () => {
    expect(
      checkChartVersion({ embedded: '0.3.0', expected: '0.3.0+e1ce2bcc39e5' }),
    ).toBeUndefined();
    expect(checkChartVersion({ embedded: '0.3.0', expected: '0.3.1+e1ce2bcc39e5' })).toMatchObject({
      code: 'ChartVersionMismatch',
      message: expect.stringContaining('(image tag 0.3.1)') as unknown,
    });
  });

  it('rejects another chart version, saying which image to use', () => {
    expect(checkChartVersion({ embedded: '0.3.0', expected: '0.4.0' })).toEqual({
      code: 'ChartVersionMismatch',
      severity: 'error',
      path: '--expect-chart-version',
      message:
        'Chart version 0.4.0 is being installed, but this haptic image embeds chart 0.3.0: keep the chart and the image from the same build (image tag 0.4.0), or install chart 0.3.0.',
    });
  });

  it('warns that it did not run when no version is expected', () => {
    expect(checkChartVersion({ embedded: '0.3.0', expected: undefined })).toMatchObject({
      code: 'ChartVersionUnchecked',
      severity: 'warning',
    });
  });
});
