import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { ExecaError, execa } from 'execa';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { embeddedChartDir } from './chart-metadata.ts';
import { describeHelmFailure } from './helm-failure.ts';
import { type RenderedObject, parseManifest } from './manifest.ts';

export interface RenderChartOptions {
  /**
   * Helm release name.
   * @default 'haptic'
   */
  readonly release?: string;
  /**
   * Release namespace.
   * @default 'haptic'
   */
  readonly namespace?: string;
  /**
   * Values files, applied in order like `helm -f`.
   * @default []
   */
  readonly valuesFiles?: readonly string[];
  /** Values applied after the files (given to helm on stdin as JSON). */
  readonly values?: Readonly<Record<string, unknown>>;
  /**
   * Chart directory.
   * @default the embedded chart (`<package>/chart`)
   */
  readonly chartDir?: string;
  /**
   * The helm binary (v3 or v4).
   * @default process.env.HELM_BIN, else `helm` from PATH
   */
  readonly helmBin?: string;
  /**
   * Also render the chart's crds/ directory.
   * @default false
   */
  readonly includeCrds?: boolean;
  /**
   * How long helm may take.
   * @default 60_000
   */
  readonly timeoutMs?: number;
}

/** The rendered release: helm's output unchanged, and the objects parsed from it. */
export interface RenderedChart {
  /** `helm template` stdout, byte for byte. Same inputs, same bytes. */
  readonly manifest: string;
  /** Every object (hooks included), in helm's order. */
  readonly objects: readonly RenderedObject[];
}

const defaultTimeoutMs = 60_000;

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

function helmArguments(options: RenderChartOptions, release: string, namespace: string): string[] {
  const args = [
    'template',
    release,
    options.chartDir ?? embeddedChartDir(),
    '--namespace',
    namespace,
  ];
  if (options.includeCrds === true) args.push('--include-crds');
  for (const file of options.valuesFiles ?? []) args.push('--values', file);
  if (options.values !== undefined) args.push('--values', '-');
  return args;
}

/**
 * Renders the chart with `helm template` (no cluster access, no lookup) and parses the
 * result. Helm's errors become a HapticError: RENDER_VALUES_INVALID when helm rejected the
 * values (schema or chart rules, with helm's message), RENDER_FAILED for other helm failures,
 * TOOL_FAILED when helm is missing, killed or too slow.
 */
export async function renderChart(options: RenderChartOptions = {}): Promise<RenderedChart> {
  const release = options.release ?? 'haptic';
  const namespace = options.namespace ?? 'haptic';
  const helmBin = options.helmBin ?? process.env.HELM_BIN ?? 'helm';
  const timeout = options.timeoutMs ?? defaultTimeoutMs;
  await Promise.all((options.valuesFiles ?? []).map(assertReadable));
  const args = helmArguments(options, release, namespace);
  let manifest: string;
  try {
    const result = await execa(helmBin, args, {
      timeout,
      stripFinalNewline: false,
      ...(options.values === undefined
        ? { stdin: 'ignore' as const }
        : { input: JSON.stringify(options.values) }),
    });
    manifest = result.stdout;
  } catch (error) {
    if (!(error instanceof ExecaError)) throw error;
    if (error.timedOut) {
      throw new HapticError(
        errorCodes.TOOL_FAILED,
        `${helmBin} template did not finish within ${timeout} ms; check the helm binary.`,
        { cause: error },
      );
    }
    if (error.exitCode === undefined) {
      throw new HapticError(
        errorCodes.TOOL_FAILED,
        `${helmBin} could not run (${error.code ?? error.shortMessage}); install helm or set HELM_BIN to its path.`,
        { cause: error },
      );
    }
    const failure = describeHelmFailure(String(error.stderr), release);
    throw new HapticError(failure.code, failure.message, { cause: error });
  }
  return { manifest, objects: parseManifest(manifest) };
}
