/** result.json of a lifecycle run: what the issue asks the artifacts to hold. */
import type { HookJob } from './hook-jobs.ts';
import type { TrafficCheck } from './haproxy-traffic.ts';
import type { SyntheticRelease } from './synthetic-releases.ts';

export const phaseNames = ['install', 'repeat', 'upgrade', 'rejection', 'recovery'] as const;
export type PhaseName = (typeof phaseNames)[number];

export interface PhaseResult {
  readonly name: PhaseName;
  readonly passed: boolean;
  readonly seconds: number;
  /** Each what-differed sentence; empty when the phase passed. */
  readonly failures: readonly string[];
  /** The engine's status line at the phase's end. */
  readonly status: string;
}

export interface ProbeSummary {
  readonly phase: PhaseName;
  readonly rounds: number;
  readonly failures: readonly TrafficCheck[];
}

export interface LifecycleResult {
  readonly provider: string;
  readonly certificates: string;
  readonly passed: boolean;
  readonly seconds: number;
  readonly phases: readonly PhaseResult[];
  readonly chartUrl: string;
  readonly imageRepository: string;
  /** Chart and image manifest digests of each synthetic release. */
  readonly releases: readonly SyntheticRelease[];
  readonly hookJobs: readonly HookJob[];
  readonly traffic: {
    /** Single checks after each phase (every replica, both schemes). */
    readonly checks: readonly TrafficCheck[];
    /** Continuous probing while a phase ran. */
    readonly during: readonly ProbeSummary[];
  };
  /** The rejected release's pre-rollout Job log lines that name the problem. */
  readonly rejectionLog: readonly string[];
  readonly tools: Readonly<Record<string, string>>;
}
