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

export function checkChartVersion({ embedded, expected }: ChartVersions): Finding | undefined {
  if (expected === undefined || expected === '') {
    return warning(
      validationCodes.ChartVersionUnchecked,
      versionFlag,
      `No chart version to expect was given, so the version guard did not run; the values were checked against the embedded chart ${embedded}. Pass ${versionFlag} (or HAPTIC_EXPECT_CHART_VERSION) to check it.`,
    );
  }
  return expected === embedded
    ? undefined
    : error(
        validationCodes.ChartVersionMismatch,
        versionFlag,
        `Chart version ${expected} is being installed, but this haptic image embeds chart ${embedded}: keep the chart and the image from the same build (image tag ${expected}), or install chart ${embedded}.`,
      );
}
