/**
 * What the lifecycle phases ask of a GitOps engine, whichever it is: put a chart version into
 * the desired state, sync unchanged desired state again, and report how a version ended.
 */
import type { ReleaseVersion } from './synthetic-releases.ts';

export interface GitOpsProvider {
  readonly name: 'flux' | 'argo';
  /** Versions of the engine's parts, for the result. */
  readonly versions: Readonly<Record<string, string>>;
  /**
   * Whether a sync of unchanged desired state runs the chart's hooks again: an Argo CD sync
   * always runs PreSync hooks; Flux does not upgrade an unchanged release.
   */
  readonly resyncRunsHooks: boolean;
  /**
   * Writes the desired state for chart `version` with release `values` (the guide's generated
   * resources) and applies it.
   */
  select(version: ReleaseVersion, values: Record<string, unknown>): Promise<void>;
  /** Requests a sync of the unchanged desired state; resolves once the engine handled it. */
  resync(): Promise<void>;
  /** Waits until `version` is released and ready; resolves with the engine's status line. */
  waitReleased(version: ReleaseVersion, ms: number): Promise<string>;
  /** Waits until `version` was refused by a failed upgrade; resolves with the status line. */
  waitRefused(version: ReleaseVersion, ms: number): Promise<string>;
  stop(): Promise<void>;
}
