/**
 * Values text (a values file, or values.yaml of the pre-rollout values Secret) → a values map,
 * read as YAML 1.1 like helm reads it (so `yes` is a boolean). A problem is a finding.
 */
import { parseDocument } from 'yaml';
import { describeError } from '../errors.ts';
import { validationCodes } from './codes.ts';
import { type Finding, error } from './finding.ts';
import { type Values, isMap } from './values-merge.ts';

/** Largest values text accepted: the size limit of a Kubernetes Secret. */
export const maxValuesBytes = 1024 * 1024;

export type ParsedValues =
  | { readonly ok: true; readonly values: Values }
  | { readonly ok: false; readonly finding: Finding };

function rejected(finding: Finding): ParsedValues {
  return { ok: false, finding };
}

export function parseValues(text: string, source: string): ParsedValues {
  if (Buffer.byteLength(text) > maxValuesBytes) {
    return rejected(
      error(
        validationCodes.ValuesUnparsable,
        source,
        `${source} is larger than ${maxValuesBytes} bytes; values that large cannot be a release's values.`,
      ),
    );
  }
  const document = parseDocument(text, { version: '1.1', prettyErrors: false, uniqueKeys: true });
  const [problem] = document.errors;
  if (problem !== undefined) {
    return rejected(
      error(
        validationCodes.ValuesUnparsable,
        source,
        `${source} is not valid YAML (${problem.message.split('\n')[0] ?? ''}); fix the syntax.`,
      ),
    );
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (cause) {
    return rejected(
      error(
        validationCodes.ValuesUnparsable,
        source,
        `${source} cannot be read as values (${describeError(cause)}); fix the YAML.`,
      ),
    );
  }
  if (value === null || value === undefined) return { ok: true, values: {} };
  if (!isMap(value)) {
    return rejected(
      error(
        validationCodes.ValuesUnparsable,
        source,
        `${source} must be a YAML map of values, not ${Array.isArray(value) ? 'a list' : typeof value}.`,
      ),
    );
  }
  return { ok: true, values: value };
}
