/**
 * YAML as helm and Kubernetes read it (sigs.k8s.io/yaml, a YAML 1.1 reader in Go): the schema
 * values files, the chart's own files and `helm template` output are read with. js-yaml, which
 * reads helm's output about four times faster than the `yaml` package in a fresh process (the
 * preflight parses helm's 48 KB after helm ends, on its critical path), and loads as one module
 * instead of 73.
 *
 * Values reach helm as the JSON of this reading, so it must be helm's own, or the preflight
 * would render (and validate) something other than what `helm upgrade -f` installs. js-yaml's
 * YAML 1.1 booleans and nulls are Go's (`yes`, `on`, `y`, `~`, …); its numbers and dates are
 * not, so they are read here as Go does (held equal to helm 3's and helm 4's reading by a test
 * that asks them, test/unit/chart/values-reading.test.ts): underscores dropped, then Go's
 * integer syntax with its prefixes (`0x`, `0o`, `0b`, a leading `0` for octal, any case),
 * goyaml's retry of `0b` with a sign after it (`0b-101` is -5), or Go's float pattern (`1e+06`,
 * how helm's `toYaml` prints a large number, is a number; `08` is 8);
 * after a leading dot an underscore only between digits; base 60 (`1:30`) is text; a date or
 * time (`2001-12-14`) stays the text it is; a number beyond a double's range is text, and so is
 * an integer with a prefix beyond Go's 64 bits (an integer within them is a double here, as the
 * JSON helm is sent holds it).
 */
import { fileURLToPath } from 'node:url';
import { NOT_RESOLVED, YAML11_SCHEMA, defineScalarTag } from 'js-yaml';

/** Go's integer syntax (strconv.ParseInt, base 0), underscores already dropped. */
const goInteger = /^[-+]?(?:0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/;
/** Go's YAML float pattern, underscores already dropped. */
const goFloat = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
/** A float after a leading dot, read as Go writes one: an underscore only between digits. */
const dotFloat = /^\.[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+(?:_[0-9]+)*)?$/;
/** goyaml's own retry after Go's syntax failed: `0b`, then a signed binary number (`0b-101` is -5). */
const signedAfterBinaryPrefix = /^0b[-+][01]+$/;
const infinityOrNaN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;

/** The largest magnitude strconv takes: ParseInt's for a signed text, ParseUint's otherwise. */
function goIntegerLimit(sign: string): bigint {
  if (sign === '-') return 2n ** 63n;
  return sign === '+' ? 2n ** 63n - 1n : 2n ** 64n - 1n;
}

/** The value of a text matching goInteger, or undefined beyond 64 bits, where Go refuses it. */
function goIntegerValue(plain: string): number | undefined {
  const sign = plain.startsWith('-') || plain.startsWith('+') ? plain.charAt(0) : '';
  const digits = plain.slice(sign.length);
  // A leading 0 is octal; BigInt reads the 0x, 0o and 0b prefixes in either case.
  const octal = digits.startsWith('0') && !/^0[xXoObB]/.test(digits);
  const magnitude = BigInt(octal ? `0o0${digits.slice(1)}` : digits);
  if (magnitude > goIntegerLimit(sign)) return undefined;
  // Go's integers have no -0.
  return sign === '-' && magnitude !== 0n ? -Number(magnitude) : Number(magnitude);
}

/** The number a plain scalar means to Go's YAML reader, or NOT_RESOLVED for text. */
export function readGoYamlNumber(text: string): number | typeof NOT_RESOLVED {
  if (infinityOrNaN.test(text)) {
    if (text.toLowerCase().endsWith('nan')) return Number.NaN;
    return text.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  let value: number | undefined;
  if (text.startsWith('.')) {
    if (dotFloat.test(text)) value = Number(text.replaceAll('_', ''));
  } else {
    // Go drops every underscore of a text starting with a digit or a sign first, then tries
    // in this order: ParseInt and ParseUint, the float pattern (an octal beyond 64 bits is read
    // as decimal there), goyaml's retry of `0b` with a sign (`0b-101` means `-0b101`).
    const plain = text.replaceAll('_', '');
    if (goInteger.test(plain)) value = goIntegerValue(plain);
    if (value === undefined && goFloat.test(plain)) value = Number(plain);
    if (value === undefined && signedAfterBinaryPrefix.test(plain))
      value = goIntegerValue(`${plain.charAt(2)}0b${plain.slice(3)}`);
  }
  return value !== undefined && Number.isFinite(value) ? value : NOT_RESOLVED;
}

const numberFirstChars = ['-', '+', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];

/** Read-only tags: this schema only loads. */
const neverDumped = (): boolean => false;

export const yaml11Schema = YAML11_SCHEMA.withTags(
  // Integers and floats are one JavaScript number: one reading serves both tags.
  defineScalarTag('tag:yaml.org,2002:int', {
    implicit: true,
    implicitFirstChars: numberFirstChars,
    resolve: readGoYamlNumber,
    identify: neverDumped,
  }),
  defineScalarTag('tag:yaml.org,2002:float', {
    implicit: true,
    implicitFirstChars: numberFirstChars,
    resolve: readGoYamlNumber,
    identify: neverDumped,
  }),
  // A date stays its text, as in helm's values (an explicit `!!timestamp` too).
  defineScalarTag('tag:yaml.org,2002:timestamp', {
    resolve: (source) => source,
    identify: neverDumped,
  }),
);

/**
 * The file this schema's code is in: this module in a checkout, the chunk of dist/ holding it
 * when built. A parse kept in the package cache names its text (chart-yaml.ts), so a changed
 * schema parses anew.
 */
export const yaml11SchemaFile = fileURLToPath(import.meta.url);
