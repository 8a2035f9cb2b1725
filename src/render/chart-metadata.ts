import { join } from 'node:path';
import { HapticError, errorCodes } from '../errors.ts';
import { embeddedChartDir } from './chart-dir.ts';
import { readChartYaml } from './chart-yaml.ts';

/** The identity fields of a Chart.yaml. */
export interface ChartMetadata {
  readonly name: string;
  readonly version: string;
  readonly appVersion: string;
}

/** Reads name, version and appVersion of the chart in `chartDir` (default: the embedded one). */
export function readChartMetadata(chartDir: string = embeddedChartDir()): ChartMetadata {
  const path = join(chartDir, 'Chart.yaml');
  let parsed: unknown;
  try {
    parsed = readChartYaml(path);
  } catch (error) {
    throw new HapticError(
      errorCodes.METADATA_INVALID,
      `${path} cannot be read as YAML; reinstall the haptic package.`,
      { cause: error },
    );
  }
  if (
    typeof parsed === 'object' &&
    parsed !== null &&
    'name' in parsed &&
    typeof parsed.name === 'string' &&
    'version' in parsed &&
    typeof parsed.version === 'string' &&
    'appVersion' in parsed &&
    typeof parsed.appVersion === 'string'
  ) {
    return { name: parsed.name, version: parsed.version, appVersion: parsed.appVersion };
  }
  throw new HapticError(
    errorCodes.METADATA_INVALID,
    `${path} needs string name, version and appVersion; reinstall the haptic package.`,
  );
}
