import { type ErrorCode, errorCodes } from '../errors.ts';

/** What a failed `helm template` means, and the message to show for it. */
export interface HelmFailure {
  readonly code: ErrorCode;
  readonly message: string;
}

/** The template that collects the chart's value rules (chart/templates/values-check.yaml). */
const valuesCheckTemplate =
  /^execution error at \([^)]*\/templates\/values-check\.yaml:\d+:\d+\): /;
const schemaFailure = /^values don't meet the specifications of the schema/;
const valuesParseFailure = /^failed to parse .*: /;
const debugHint = /\n*Use --debug flag to render out invalid YAML\s*$/;

/** helm's stderr without its `Error: ` prefix and `--debug` hint. */
function cleanHelmStderr(stderr: string): string {
  return stderr
    .trim()
    .replace(/^Error: /, '')
    .replace(debugHint, '')
    .trim();
}

/**
 * Classifies helm's stderr of a failed `helm template`. Schema violations (helm's own message,
 * with the path of each offending key), the chart's value rules and unparseable values files
 * are RENDER_VALUES_INVALID; anything else is RENDER_FAILED with helm's message.
 */
export function describeHelmFailure(stderr: string, release: string): HelmFailure {
  const cleaned = cleanHelmStderr(stderr);
  if (valuesCheckTemplate.test(cleaned)) {
    return {
      code: errorCodes.RENDER_VALUES_INVALID,
      message: cleaned.replace(valuesCheckTemplate, ''),
    };
  }
  if (schemaFailure.test(cleaned) || valuesParseFailure.test(cleaned)) {
    return {
      code: errorCodes.RENDER_VALUES_INVALID,
      message: `helm rejected the values of release "${release}": ${cleaned}`,
    };
  }
  return {
    code: errorCodes.RENDER_FAILED,
    message: `helm template failed for release "${release}": ${cleaned === '' ? 'no error message' : cleaned}`,
  };
}
