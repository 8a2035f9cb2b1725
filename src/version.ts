import { readFileSync } from 'node:fs';
import { HapticError, errorCodes } from './errors.ts';

/**
 * Root of the installed package (holds package.json and the embedded chart): the directory
 * above this module's file, which is src/version.ts in a checkout and, when built, a chunk
 * directly in dist/ (dev/build-dist.ts).
 */
export const packageRoot = new URL('..', import.meta.url);

/**
 * The binary's version. package.json is the one source of truth: the embedded chart's
 * version and appVersion must equal it (checked by the chart tests).
 */
export function readPackageVersion(): string {
  const text = readFileSync(new URL('package.json', packageRoot), 'utf8');
  const parsed: unknown = JSON.parse(text);
  if (
    typeof parsed === 'object' &&
    parsed !== null &&
    'version' in parsed &&
    typeof parsed.version === 'string'
  ) {
    return parsed.version;
  }
  throw new HapticError(
    errorCodes.METADATA_INVALID,
    'package.json has no string "version"; reinstall the haptic package.',
  );
}
