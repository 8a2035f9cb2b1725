import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { embeddedChartDir, readChartMetadata } from '../../src/render/index.ts';
import { projectRoot } from './tools.ts';

/** The haptic image as the chart's defaults name it. */
export interface ChartImage {
  /** `image.repository` of values.yaml. */
  readonly repository: string;
  /** `image.tag` of values.yaml, or the chart's appVersion when that is empty (as the chart does). */
  readonly tag: string;
  /** `<repository>:<tag>`, the reference the chart's Pods use by default. */
  readonly reference: string;
}

/**
 * The image reference the chart renders when no image value is set (its `haptic.image` helper:
 * repository, then tag or else appVersion). `make image` names its archive with it, so an
 * imported archive is what a default `helm install` runs.
 */
export function readChartImage(chartDir: string = embeddedChartDir()): ChartImage {
  const path = join(chartDir, 'values.yaml');
  const values: unknown = parse(readFileSync(path, 'utf8'), { version: '1.1' });
  const image =
    typeof values === 'object' && values !== null && 'image' in values ? values.image : undefined;
  if (
    typeof image !== 'object' ||
    image === null ||
    !('repository' in image) ||
    typeof image.repository !== 'string' ||
    image.repository === '' ||
    !('tag' in image) ||
    typeof image.tag !== 'string'
  ) {
    throw new Error(
      `${path}: image.repository must be a non-empty string and image.tag a string; restore the chart's defaults.`,
    );
  }
  const tag = image.tag || readChartMetadata(chartDir).appVersion;
  return { repository: image.repository, tag, reference: `${image.repository}:${tag}` };
}

/** Where `make image` writes the archive of `image` (image/build.sh: `.image/haptic-<tag>.oci.tar`). */
export function imageArchivePath(image: ChartImage = readChartImage()): string {
  return join(projectRoot, '.image', `haptic-${image.tag}.oci.tar`);
}
