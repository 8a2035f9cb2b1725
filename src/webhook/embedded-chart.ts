/**
 * The chart embedded in this binary, as the validator needs it: its version, its values.yaml
 * and its compiled values.schema.json. Loaded once per process.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import {
  embeddedChartDir,
  loadValuesSchemaCheck,
  readChartMetadata,
  readChartYaml,
} from '../render/index.ts';
import type { EmbeddedChart } from '../validation/index.ts';
import { isRecord } from '../is-record.ts';

function readJsonOrYaml(path: string, yaml: boolean): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = yaml ? readChartYaml(path) : JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new HapticError(
      errorCodes.METADATA_INVALID,
      `${path} cannot be read (${describeError(error)}); reinstall the haptic package.`,
      { cause: error },
    );
  }
  if (!isRecord(parsed)) {
    throw new HapticError(
      errorCodes.METADATA_INVALID,
      `${path} is not a map; reinstall the haptic package.`,
    );
  }
  return parsed;
}

/** Loads the chart in `chartDir` (default: the embedded chart). */
export function loadEmbeddedChart(chartDir: string = embeddedChartDir()): EmbeddedChart {
  return {
    version: readChartMetadata(chartDir).version,
    defaults: readJsonOrYaml(join(chartDir, 'values.yaml'), true),
    schema: loadValuesSchemaCheck(readJsonOrYaml(join(chartDir, 'values.schema.json'), false)),
  };
}
