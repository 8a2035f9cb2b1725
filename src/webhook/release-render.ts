/**
 * How helm renders a release for the validator (release-io.ts): the embedded chart unless
 * another is named, with the release's time limit. Apart from release-io.ts, which parses
 * what helm renders, so that `haptic preflight` starts helm before the YAML parser loads.
 */
import { type PendingRender, type PendingRenderOptions, startRender } from '../render/helm-run.ts';

/** Which release helm renders, from which chart, and how long it may take. */
export interface ReleaseRenderOptions {
  readonly release: string;
  readonly namespace: string;
  /** @default the embedded chart */
  readonly chartDir?: string;
  /** @default HELM_BIN, else `helm` from PATH */
  readonly helmBin?: string;
  /** @default 30_000 */
  readonly renderTimeoutMs?: number;
}

/** The helm options of a release's render. */
export function chartOptions(options: ReleaseRenderOptions): PendingRenderOptions {
  return {
    release: options.release,
    namespace: options.namespace,
    timeoutMs: options.renderTimeoutMs ?? 30_000,
    ...(options.chartDir === undefined ? {} : { chartDir: options.chartDir }),
    ...(options.helmBin === undefined ? {} : { helmBin: options.helmBin }),
  };
}

/** The release's render with helm started now, before its values are known (startRender). */
export function startReleaseRender(options: ReleaseRenderOptions): PendingRender {
  return startRender(chartOptions(options));
}
