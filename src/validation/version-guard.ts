/**
 * The version guard: the chart being installed must be the chart embedded in this binary, or
 * everything else the validator says is about another chart.
 */
import { validationCodes } from './codes.ts';
import { type Finding, error, warning } from './finding.ts';

export interface ChartVersions {
  /** Version of the chart embedded in this binary (= `haptic version`). */
  readonly embedded: string;
  /** Version being installed (`--expect-chart-version` / HAPTIC_EXPECT_CHART_VERSION). */
  readonly expected: string | undefined;
}

export const versionFlag = '--expect-chart-version';

/**
 * A chart version without its SemVer build metadata (`+…`), which SemVer leaves out of
 * comparisons: Flux's helm-controller, for one, appends the OCI digest of the chart it pulled
 * (`0.3.0+e1ce2bcc39e5`) to the version it installs.
 */
function withoutBuild(version: string): string {
  const plus = version.indexOf('+');
  return plus === -1 ? version : version.slice(0, plus);
}

/** Whether two chart versions are the same version (build metadata ignored). */
export function sameChartVersion(a: string, b: string): boolean {
  return withoutBuild(a) === withoutBuild(b);
}

export function checkChartVersion({ embedded, expected }: ChartVersions): Finding | undefined {
  if (expected === undefined || expected === '') {
    return warning(
      validationCodes.ChartVersionUnchecked,
      versionFlag,
      `No chart version to expect was given, so the version guard did not run; the values were checked against the embedded chart ${embedded}. Pass ${versionFlag} (or HAPTIC_EXPECT_CHART_VERSION) to check it.`,
    );
  }
  return sameChartVersion(expected, embedded)
    ? undefined
    : error(
        validationCodes.ChartVersionMismatch,
        versionFlag,
        `Chart version ${expected} is being installed, but this haptic image embeds chart ${embedded}: keep the chart and the image from the same build (image tag ${withoutBuild(expected)}), or install chart ${embedded}.`,
      );
}
