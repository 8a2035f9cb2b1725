import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readChartImage } from '../../../dev/lib/chart-image.ts';
import { embeddedChartDir, readChartMetadata } from '../../../src/render/index.ts';
import { chartModes, findObject, renderMode } from '../chart/chart-fixtures.ts';

/** A copy of the chart's Chart.yaml beside the given values.yaml text. */
function chartWithValues(values: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'chart-image-'));
  copyFileSync(join(embeddedChartDir(), 'Chart.yaml'), join(dir, 'Chart.yaml'));
  writeFileSync(join(dir, 'values.yaml'), values);
  return dir;
}

describe('the image name make image gives its archive', () => {
  it("is the image the chart's Pods run by default: localhost/haptic:<appVersion>", async () => {
    const image = readChartImage();
    const { appVersion } = readChartMetadata();
    expect(image).toEqual({
      repository: 'localhost/haptic',
      tag: appVersion,
      reference: `localhost/haptic:${appVersion}`,
    });
    const deployment = findObject(
      await renderMode('helm', chartModes.default),
      'Deployment',
      'haptic-controller',
    );
    expect(JSON.stringify(deployment.body)).toContain(`"image":"${image.reference}"`);
  });

  it('takes a default tag of values.yaml over the appVersion, as the chart does', () => {
    const image = readChartImage(chartWithValues('image:\n  repository: r.example/h\n  tag: t1\n'));
    expect(image.reference).toBe('r.example/h:t1');
  });

  it.each([
    ['no image block', 'credentials: {}\n'],
    ['an empty repository', "image:\n  repository: ''\n  tag: ''\n"],
    ['a numeric tag', 'image:\n  repository: r.example/h\n  tag: 1.0\n'],
  ])('is refused, naming image.repository and image.tag, for values with %s', (_, values) => {
    const dir = chartWithValues(values);
    expect(() => readChartImage(dir)).toThrow(
      `${join(dir, 'values.yaml')}: image.repository must be a non-empty string and image.tag a string; restore the chart's defaults.`,
    );
  });
});
