/**
 * `haproxy -c` of rendered sets for one pipeline, and what it remembers: results by digest,
 * so rendering the same inputs twice checks once, and the last set HAProxy accepted, so a set
 * that differs from it only in server slots (runtime-changes.ts: addresses, ports, `disabled`,
 * all linted) is accepted without a check, as the agents apply it at runtime.
 */
import type { ApplyFile } from '../../agent-api/apply-encoding.ts';
import { configFileName } from '../../agent-api/api-types.ts';
import type { CheckLane } from '../../sandbox/check-gate.ts';
import { contentDigest } from '../../sandbox/content-digest.ts';
import { type FileSetText, runtimePlan } from '../../haproxy/runtime-changes.ts';
import type { ControllerMetrics } from '../status/controller-metrics.ts';
import { type BundleCheckOptions, checkBundle } from './bundle-check.ts';

/** How one run of the pipeline checks (part of its RunOptions, config-pipeline.ts). */
export interface RunCheckOptions {
  /** Keep a rejection or success of `haproxy -c` for this digest. @default true */
  readonly remember?: boolean;
  /**
   * A proposed object (admission): its templates are parsed afresh and not kept, and its check
   * neither uses nor moves the last set HAProxy accepted (a set that differs from it only in
   * server slots is checked all the same): what the delivered configuration is must not
   * change the answer about a proposed one.
   */
  readonly proposed?: boolean;
  /** The check sandbox's lane (admission reviews have their own). @default 'delivery' */
  readonly lane?: CheckLane;
  /** Aborted when no one waits for the outcome any more: a running check is stopped. */
  readonly signal?: AbortSignal;
}

export interface CheckResult {
  readonly ok: boolean;
  readonly failure?: 'rejected' | 'unavailable';
  readonly message: string;
  readonly exhausted?: 'memory';
}

/** Check results kept, by digest. */
const keptChecks = 16;

/** Every file's digest and haproxy.cfg's text: what `runtimePlan` compares. */
function fileSetText(files: readonly ApplyFile[]): FileSetText {
  return {
    files: files.map((file) => ({ path: file.path, digest: contentDigest(file.content) })),
    config: Buffer.from(
      files.find((file) => file.path === configFileName)?.content ?? new Uint8Array(),
    ).toString('utf8'),
  };
}

export class KeptChecks {
  readonly #check: BundleCheckOptions;
  readonly #metrics: ControllerMetrics | undefined;
  readonly #results = new Map<string, CheckResult>();
  /** The last set `haproxy -c` accepted (or one differing from such a set only in slots). */
  #lastAccepted: FileSetText | undefined;

  constructor(check: BundleCheckOptions, metrics: ControllerMetrics | undefined) {
    this.#check = check;
    this.#metrics = metrics;
  }

  /** A set that differs from the last accepted one only in slots (a slot update) is accepted. */
  accepted(text: FileSetText): void {
    this.#lastAccepted = text;
  }

  /** `haproxy -c` of a digest, or its kept result. */
  async check(
    digest: string,
    files: readonly ApplyFile[],
    deadline: number | undefined,
    options: RunCheckOptions,
  ): Promise<CheckResult> {
    const kept = this.#results.get(digest);
    if (kept !== undefined) return kept;
    const text = fileSetText(files);
    const proposed = options.proposed === true;
    // Only server slots differ from a set HAProxy accepted: it accepts this one too.
    if (
      !proposed &&
      this.#lastAccepted !== undefined &&
      runtimePlan(this.#lastAccepted, text).runtime
    ) {
      this.#lastAccepted = text;
      return { ok: true, message: '' };
    }
    const check = this.#check;
    const left = deadline === undefined ? undefined : Math.floor(deadline - performance.now());
    if (left !== undefined && left <= 0) {
      return {
        ok: false,
        failure: 'unavailable',
        message: 'no time was left before the deadline of the request to run it.',
      };
    }
    const started = performance.now();
    const outcome = await checkBundle(files, {
      ...check,
      ...(left === undefined ? {} : { timeoutMs: Math.min(check.timeoutMs ?? left, left) }),
      ...(options.lane === undefined ? {} : { lane: options.lane }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    this.#metrics?.checkSeconds.observe((performance.now() - started) / 1000);
    const result: CheckResult = outcome.ok
      ? { ok: true, message: '' }
      : {
          ok: false,
          failure: outcome.failure,
          message: outcome.message,
          ...(outcome.exhausted === undefined ? {} : { exhausted: outcome.exhausted }),
        };
    if (outcome.ok && !proposed) this.#lastAccepted = text;
    // A check that could not run (timeout, missing binary) is not kept.
    if (options.remember !== false && (outcome.ok || outcome.failure === 'rejected')) {
      this.#remember(digest, result);
    }
    return result;
  }

  #remember(digest: string, result: CheckResult): void {
    this.#results.set(digest, result);
    for (const old of this.#results.keys()) {
      if (this.#results.size <= keptChecks) break;
      this.#results.delete(old);
    }
  }
}
