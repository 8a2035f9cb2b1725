/**
 * The release entry point, shared by the pre-rollout Job (`haptic preflight`) and the webhook
 * (the pre-rollout values Secret). Stages, each stopping the next when it rejects:
 *
 * 1. version guard;  2. values schema;  3. the chart's value rules (pure, all reported);
 * 4. the rendered chart (helm's verdict, and the mounts the validator checked);
 * 5. live state (skipped offline, with a warning).
 *
 * Rendering and reading go through `io`, so the rules stay pure; rendering starts at once and
 * runs beside the pure stages, reading starts as soon as the plan is known to be valid.
 */
import { HapticError, errorCodes } from '../errors.ts';
import { validationCodes } from './codes.ts';
import {
  type Finding,
  type ValidationReport,
  error,
  everyFinding,
  hasErrors,
  report,
  warning,
} from './finding.ts';
import { type LiveState, checkLiveState } from './live-rules.ts';
import { type ReleasePlan, planRelease } from './release-plan.ts';
import { readReleaseValues } from './release-values.ts';
import { type RenderedObjectView, checkRenderedMounts } from './render-rules.ts';
import { SecretDecoder } from '../secrets/secret-decoder.ts';
import { type Values, coalesceValues } from './values-merge.ts';
import { sharedSecretNames, valuesChecks } from './values-rules.ts';
import type { ValuesSchemaCheck } from './values-schema.ts';
import { checkChartVersion } from './version-guard.ts';

/** The chart embedded in this binary. */
export interface EmbeddedChart {
  readonly version: string;
  /** Its values.yaml. */
  readonly defaults: Values;
  /** Its values.schema.json, compiled. */
  readonly schema: ValuesSchemaCheck;
}

export interface ReleaseRequest {
  readonly release: string;
  readonly namespace: string;
  /** The user's values: values files merged in order, before the chart's defaults. */
  readonly values: Values;
  readonly chart: EmbeddedChart;
  /** The chart version being installed, when the caller knows it. */
  readonly expectedChartVersion: string | undefined;
  readonly now: Date;
}

/** What to read from the cluster: the plan's readable Secrets and the two Deployments. */
export interface LiveReads {
  readonly namespace: string;
  /** Secrets read whole. */
  readonly secrets: readonly string[];
  /**
   * Secrets whose data no rule reads, read as metadata only: the issuer Secret, of which only
   * the provider markers count, so its CA key never leaves the API server for a validation.
   */
  readonly metadataOnly: readonly string[];
  readonly deployments: { readonly server: string; readonly client: string };
}

export interface ReleaseIo {
  /**
   * Renders the chart with the user's values. Throws a HapticError RENDER_VALUES_INVALID when
   * helm rejects the values (a finding); any other error is an environment failure.
   */
  readonly render: (values: Values) => Promise<readonly RenderedObjectView[]>;
  /** Reads the live state; absent for offline validation. Errors are environment failures. */
  readonly readLive?: (reads: LiveReads) => Promise<LiveState>;
  /** @default a new decoder */
  readonly decoder?: SecretDecoder;
}

type Settled<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** A promise that never rejects, so an abandoned speculative step cannot crash the process. */
function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (reason: unknown) => ({ ok: false, error: reason }),
  );
}

function liveReads(plan: ReleasePlan): LiveReads {
  const readable = plan.secrets.filter((secret) => secret.readable);
  const names = (wanted: (role: string) => boolean): string[] =>
    readable.filter((secret) => wanted(secret.role)).map((secret) => secret.name);
  return {
    namespace: plan.namespace,
    secrets: names((role) => role !== 'issuer'),
    metadataOnly: names((role) => role === 'issuer'),
    deployments: { server: plan.haproxyDeployment, client: plan.controllerDeployment },
  };
}

function renderFinding(failure: unknown, release: string): Finding {
  if (failure instanceof HapticError && failure.code === errorCodes.RENDER_VALUES_INVALID) {
    return error(
      validationCodes.ChartRenderRejected,
      'values',
      `helm rejected the values of release ${release} while rendering the embedded chart: ${failure.message}`,
    );
  }
  throw failure;
}

/** Validates a release's future configuration. Environment failures throw; rule violations are findings. */
export async function validateRelease(
  request: ReleaseRequest,
  io: ReleaseIo,
): Promise<ValidationReport> {
  const { release, namespace, chart, now } = request;
  const version = checkChartVersion({
    embedded: chart.version,
    expected: request.expectedChartVersion,
  });
  const findings: Finding[] = version === undefined ? [] : [version];
  if (hasErrors(findings)) return report(findings);

  const rendering = settle(io.render(request.values));
  const values = coalesceValues(request.values, chart.defaults);
  findings.push(...chart.schema(values));
  if (hasErrors(findings)) return report(findings);

  const typed = readReleaseValues(values);
  const plan = planRelease(release, namespace, typed);
  const subject = { values: typed, plan };
  findings.push(...everyFinding(subject, valuesChecks()), ...sharedSecretNames(subject));
  if (hasErrors(findings)) return report(findings);

  const reading = io.readLive === undefined ? undefined : settle(io.readLive(liveReads(plan)));
  const rendered = await rendering;
  if (!rendered.ok) return report([...findings, renderFinding(rendered.error, release)]);
  findings.push(...checkRenderedMounts(plan, rendered.value));
  if (hasErrors(findings)) return report(findings);

  if (reading === undefined) {
    findings.push(
      warning(
        validationCodes.LiveChecksSkipped,
        '--offline',
        'Live checks were skipped (offline): existing Secrets, provider ownership and credential keys were not checked.',
      ),
    );
    return report(findings);
  }
  const live = await reading;
  if (!live.ok) throw live.error;
  const decoder = io.decoder ?? new SecretDecoder();
  findings.push(...checkLiveState({ plan, values: typed, live: live.value, now, decoder }));
  return report(findings);
}
