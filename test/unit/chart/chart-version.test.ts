import { describe, expect, it } from 'vitest';
import { readChartMetadata } from '../../../src/render/index.ts';
import { readPackageVersion } from '../../../src/version.ts';

describe('chart metadata', () => {
  it('is the chart "haptic" whose version and appVersion equal package.json\'s version', () => {
    const version = readPackageVersion();
    expect(readChartMetadata()).toEqual({ name: 'haptic', version, appVersion: version });
  });
});
