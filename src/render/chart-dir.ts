import { fileURLToPath } from 'node:url';
import { packageRoot } from '../version.ts';

/** The chart shipped in the package (and the image): `<package>/chart`. */
export function embeddedChartDir(): string {
  return fileURLToPath(new URL('chart', packageRoot));
}
