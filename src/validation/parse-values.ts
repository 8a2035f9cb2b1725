/**
 * Values text (a values file, or values.yaml of the pre-rollout values Secret) → a values map,
 * read as YAML 1.1 like helm reads it (so `yes` is a boolean). A problem is a finding.
 */
import { loadAll } from 'js-yaml';
import { describeError } from '../errors.ts';
import { validationCodes } from './codes.ts';
import { type Finding, error } from './finding.ts';
import type { Values } from './values-merge.ts';
import { yaml11Schema } from './yaml-schema.ts';
import { isRecord } from '../is-record.ts';

/** Largest values text accepted: the size limit of a Kubernetes Secret. */
export const maxValuesBytes = 1024 * 1024;

/**
 * What values may become once every alias (`*name`) is written out: aliases share one object
 * here, but merging them and handing them to helm as JSON copy them, so the bounds hold for
 * the written-out form (js-yaml bounds the text's own nesting at 100 levels).
 */
const maxExpandedEntries = 1_000_000;
const maxExpandedDepth = 100;

interface Shape {
  readonly entries: number;
  readonly depth: number;
}

/**
 * The entries and nesting of `value` written out, each object measured once (so an alias bomb
 * is measured without being expanded), the recursion never deeper than the depth bound; `cycle`
 * for an object that contains itself (`a: &a [*a]`), `over` past a bound, `notJson` for
 * `.inf` or `.nan` (helm turns values into JSON, which has no such numbers, and refuses them).
 */
function expandedShape(
  value: unknown,
  level: number,
  seen: Map<object, Shape | 'open'>,
): Shape | 'cycle' | 'over' | 'notJson' {
  if (typeof value === 'number' && !Number.isFinite(value)) return 'notJson';
  if (typeof value !== 'object' || value === null) return { entries: 1, depth: 0 };
  if (level > maxExpandedDepth) return 'over';
  const known = seen.get(value);
  if (known === 'open') return 'cycle';
  if (known !== undefined) return known;
  seen.set(value, 'open');
  let entries = 1;
  let depth = 0;
  for (const child of Object.values(value)) {
    const shape = expandedShape(child, level + 1, seen);
    if (typeof shape === 'string') return shape;
    entries += shape.entries;
    depth = Math.max(depth, shape.depth + 1);
    // A shape measured before (another alias of it) counts from where it is written again.
    if (entries > maxExpandedEntries || level + depth > maxExpandedDepth) return 'over';
  }
  const shape = { entries, depth };
  seen.set(value, shape);
  return shape;
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
    // Aliases are not counted: their written-out size and nesting are bounded below.
    documents = loadAll(text, { schema: yaml11Schema });
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
  const shape = expandedShape(value, 0, new Map());
  if (shape === 'cycle') {
    return rejected(
      error(
        validationCodes.ValuesUnparsable,
        source,
        `${source} has an alias inside the value it names (a value that contains itself), which helm refuses too; remove that alias.`,
      ),
    );
  }
  if (shape === 'notJson') {
    return rejected(
      error(
        validationCodes.ValuesUnparsable,
        source,
        `${source} holds .inf or .nan, which helm refuses (values become JSON, which has no such numbers); write a number, or quote the text.`,
      ),
    );
  }
  if (shape === 'over') {
    return rejected(
      error(
        validationCodes.ValuesUnparsable,
        source,
        `${source} would hold more than ${maxExpandedEntries} entries or nest deeper than ${maxExpandedDepth} levels once its aliases are written out; write the values with fewer nested aliases.`,
      ),
    );
  }
  if (value === null || value === undefined) return { ok: true, values: {} };
  if (!isRecord(value)) {
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
