/**
 * `haptic ingress lint`'s report on one Ingress (pure): one line per annotation under
 * ingress-nginx's or HAProxy's prefix with its verdict and what this controller does, then
 * the paths that would be left out and what would exclude the whole Ingress. The verdicts
 * follow readIngressOptions (refused before supported, a value that does not parse invalid,
 * an unknown name ignored; a test holds the two equal over the catalog), the texts come from
 * the catalog and the migration table (nginx-annotations.ts).
 */
import { isExpected } from './annotation-values.ts';
import {
  annotationsByName,
  defaultIngressOptions,
  haproxyPrefix,
  nginxPrefix,
} from './annotation-catalog.ts';
import { type MigrationStatus, annotationStatus } from './nginx-annotations.ts';

export type LintVerdict = 'served' | 'served differently' | 'ignored' | 'refused' | 'invalid';

export interface AnnotationVerdict {
  /** The annotation's full name. */
  readonly name: string;
  readonly verdict: LintVerdict;
  /** What this controller does with it, or the form its value should have. One sentence. */
  readonly says: string;
}

const verdictOf: Readonly<Record<MigrationStatus, LintVerdict>> = {
  supported: 'served',
  differently: 'served differently',
  refused: 'refused',
  unsupported: 'ignored',
};

/** The annotation's name is under a prefix this controller reads. */
export function isLintedAnnotation(name: string): boolean {
  return name.startsWith(nginxPrefix) || name.startsWith(haproxyPrefix);
}

/** A value as YAML gave it, named for a sentence: `a boolean (true)`. */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'empty (null)';
  if (typeof value === 'boolean' || typeof value === 'number') {
    return `a ${typeof value} (${String(value)})`;
  }
  return Array.isArray(value) ? 'a list' : `a ${typeof value}`;
}

/** The verdict on annotation `name` holding `value` (as YAML read it: not always a string). */
export function annotationVerdict(name: string, value: unknown): AnnotationVerdict {
  if (typeof value !== 'string') {
    return {
      name,
      verdict: 'invalid',
      says: `The value is ${kindOf(value)}, not a string: the API server accepts only strings as annotation values, so quote it ("true", "60").`,
    };
  }
  const { status, note } = annotationStatus(name);
  const supported = annotationsByName.get(name);
  if (status !== 'refused' && supported !== undefined) {
    const parsed = supported.apply(value, { ...defaultIngressOptions });
    if (isExpected(parsed)) {
      return {
        name,
        verdict: 'invalid',
        says: `Expected ${parsed.expected}; the Ingress's routes are left out until the value is fixed.`,
      };
    }
  }
  return { name, verdict: verdictOf[status], says: note };
}

/** A problem as validateIngress words it: the field and a sentence. */
export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

export interface IngressLintInput {
  /** `namespace/name`. */
  readonly label: string;
  /** Where it was read: `web.yaml, document 2`. */
  readonly source: string;
  /** metadata.annotations as YAML read them. */
  readonly annotations: Readonly<Record<string, unknown>>;
  /** What excludes the whole Ingress, if anything. */
  readonly excluded: FieldProblem | undefined;
  /** Paths left out (regex paths that do not parse, rewrite-targets naming missing groups). */
  readonly leftOut: readonly FieldProblem[];
}

export interface IngressLint {
  readonly lines: readonly string[];
  /** An annotation refused or invalid, a path left out, or the Ingress excluded. */
  readonly failed: boolean;
}

const maxValueLength = 80;
const maxNameLength = 120;
const maxMessageLength = 600;

/** Text without control characters (a terminal's escapes), at most `max` characters. */
function printable(text: string, max: number): string {
  const clean = text.replace(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu, '?');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/** A value for a line: quoted, at most 80 characters, control characters escaped. */
export function shownValue(value: unknown): string {
  if (typeof value !== 'string') {
    return typeof value === 'object' && value !== null ? kindOf(value) : String(value);
  }
  return JSON.stringify(
    value.length > maxValueLength ? `${value.slice(0, maxValueLength)}…` : value,
  );
}

const column = 'served differently'.length + 2;

function line(tag: string, text: string): string {
  return `  ${tag.padEnd(column)}${printable(text, maxMessageLength)}`;
}

/** The Ingress's outcome, for its heading. */
function outcome(verdicts: readonly AnnotationVerdict[], input: IngressLintInput): string {
  if (input.excluded !== undefined) return 'excluded';
  if (verdicts.some((v) => v.verdict === 'refused' || v.verdict === 'invalid')) {
    return 'routes left out';
  }
  if (input.leftOut.length > 0) return 'some paths left out';
  if (verdicts.some((v) => v.verdict === 'ignored')) return 'served, some annotations ignored';
  return 'served';
}

/** The report on one Ingress: a heading, then a line per annotation, path and problem. */
export function lintIngress(input: IngressLintInput): IngressLint {
  const names = Object.keys(input.annotations).filter(isLintedAnnotation).sort();
  const verdicts = names.map((name) => annotationVerdict(name, input.annotations[name]));
  const lines = [
    `Ingress ${printable(input.label, maxNameLength * 2)} (${printable(input.source, 300)}): ${outcome(verdicts, input)}`,
    ...verdicts.map((verdict) =>
      line(
        verdict.verdict,
        `${printable(verdict.name, maxNameLength)}=${shownValue(input.annotations[verdict.name])}: ${verdict.says}`,
      ),
    ),
    ...input.leftOut.map((problem) => line('left out', problem.message)),
    ...(input.excluded === undefined ? [] : [line('excluded', input.excluded.message)]),
  ];
  const failed =
    input.excluded !== undefined ||
    input.leftOut.length > 0 ||
    verdicts.some((verdict) => verdict.verdict === 'refused' || verdict.verdict === 'invalid');
  return { lines, failed };
}

/** The closing line: how many Ingresses pass and fail, how many other objects were skipped. */
export function lintSummary(reports: readonly IngressLint[], skipped: number): string {
  const failed = reports.filter((report) => report.failed).length;
  const ingresses = `${reports.length} Ingress${reports.length === 1 ? '' : 'es'}`;
  const others =
    skipped === 0 ? '' : `; ${skipped} other object${skipped === 1 ? '' : 's'} skipped`;
  if (reports.length === 0) return `No networking.k8s.io/v1 Ingress found${others}.`;
  return `${ingresses} checked: ${reports.length - failed} pass, ${failed} with an annotation refused or invalid, a path left out or the whole Ingress excluded${others}.`;
}
