import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { type RenderChartOptions, launchHelm } from './helm-run.ts';
import { type RenderedObject, parseManifest } from './manifest.ts';

export type { RenderChartOptions } from './helm-run.ts';

/** The rendered release: helm's output unchanged, and the objects parsed from it. */
export interface RenderedChart {
  /** `helm template` stdout, byte for byte. Same inputs, same bytes. */
  readonly manifest: string;
  /** Every object (hooks included), in helm's order. */
  readonly objects: readonly RenderedObject[];
}

async function assertReadable(path: string): Promise<void> {
  try {
    await access(path, constants.R_OK);
  } catch (error) {
    throw new HapticError(
      errorCodes.USAGE_INVALID,
      `values file ${path} cannot be read (${describeError(error)}); check the path.`,
      { cause: error },
    );
  }
}

/**
 * Renders the chart with `helm template` (no cluster access, no lookup) and parses the
 * result. Helm's errors become a HapticError: RENDER_VALUES_INVALID when helm rejected the
 * values (schema or chart rules, with helm's message), RENDER_FAILED for other helm failures,
 * TOOL_FAILED when helm is missing, killed or too slow.
 */
export async function renderChart(options: RenderChartOptions = {}): Promise<RenderedChart> {
  const valuesFiles = options.valuesFiles ?? [];
  if (valuesFiles.length > 0) await Promise.all(valuesFiles.map(assertReadable));
  const { values } = options;
  const { helm, output } = launchHelm(options, values !== undefined);
  helm.send(values === undefined ? undefined : JSON.stringify(values));
  const manifest = await output();
  return { manifest, objects: parseManifest(manifest) };
}
