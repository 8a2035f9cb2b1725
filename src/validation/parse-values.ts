/**
 * Values text (a values file, or values.yaml of the pre-rollout values Secret) → a values map,
 * read as YAML 1.1 like helm reads it (so `yes` is a boolean). A problem is a finding.
 */
import { loadAll } from 'js-yaml';
import { describeError } from '../errors.ts';
import { validationCodes } from './codes.ts';
import { type Finding, error } from './finding.ts';
import { type Values, isMap } from './values-merge.ts';
import { yaml11Schema } from './yaml-schema.ts';

/** Largest values text accepted: the size limit of a Kubernetes Secret. */
export const maxValuesBytes = 1024 * 1024;

/** Aliases (`*name`) a values text may hold, and how many entries they may make it. */
const maxAliases = 100;
const maxExpandedEntries = 1_000_000;

/**
 * How many entries `value` holds once every alias is written out (aliases share one object
 * here, but merging and handing the values to helm copy them): counted once per object, so an
 * alias bomb is measured without being expanded. Stops counting past `limit`.
 */
function expandedEntries(value: unknown, limit: number, seen = new Map<object, number>()): number {
  if (typeof value !== 'object' || value === null) return 1;
  const known = seen.get(value);
  if (known !== undefined) return known;
  let total = 1;
  for (const child of Object.values(value)) {
    total += expandedEntries(child, limit, seen);
    if (total > limit) break;
  }
  seen.set(value, total);
  return total;
}

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
  let documents: unknown[];
  try {
    documents = loadAll(text, { schema: yaml11Schema, maxAliases });
  } catch (problem) {
    return rejected(
      error(
        validationCodes.ValuesUnparsable,
        source,
        `${source} is not valid YAML (${describeError(problem).split('\n')[0] ?? ''}); fix the syntax.`,
      ),
    );
  }
  if (documents.length > 1) {
    return rejected(
      error(
        validationCodes.ValuesUnparsable,
        source,
        `${source} holds ${documents.length} YAML documents; values are one map, so remove the --- separators.`,
      ),
    );
  }
  const [value] = documents;
  if (expandedEntries(value, maxExpandedEntries) > maxExpandedEntries) {
    return rejected(
      error(
        validationCodes.ValuesUnparsable,
        source,
        `${source} would hold more than ${maxExpandedEntries} entries once its aliases are written out; write the values without nested aliases.`,
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
