/**
 * YAML 1.1: the schema values files, the chart's own files and `helm template` output are read
 * with. js-yaml, which reads helm's output about four times faster than the `yaml` package in a
 * fresh process (the preflight parses helm's 48 KB after helm ends, on its critical path), and
 * loads as one module instead of 73.
 *
 * js-yaml's own 1.1 numbers are the strict spec forms, so `1e+06` (how helm's `toYaml` prints
 * a large number from values: Go formats float64 that way) or `08` would be strings, where Go's
 * reader (sigs.k8s.io/yaml, so helm and Kubernetes) reads numbers. Here an integer and a float
 * are read exactly as the `yaml` package read YAML 1.1 (this project's reader before), held
 * equal to it by a property test, with one exception: a text that matches a number pattern
 * without a digit to read (`.`, `e0`, `0_`) is a string here, where the `yaml` package made NaN.
 *
 * That reading is not yet Go's in every form (found by running helm 3.22; each was so before
 * too): base-60 `1:30` is 90 here and a string to helm; `0o17`, `0X1F`, `0B101` are numbers to
 * helm and strings here; `0_` is 0 to helm; `._5` is a string to helm and 0.5 here; a date is a
 * Date here (JSON `…T00:00:00.000Z`) and text to helm. Values go to helm as the JSON of this
 * reading, so for such a value the preflight renders what this reading means.
 */
import { NOT_RESOLVED, YAML11_SCHEMA, defineScalarTag } from 'js-yaml';

const sign = '[-+]?';
const binaryInt = new RegExp(`^${sign}0b[0-1_]+$`);
const octalInt = new RegExp(`^${sign}0[0-7_]+$`);
const decimalInt = new RegExp(`^${sign}[0-9][0-9_]*$`);
const hexInt = new RegExp(`^${sign}0x[0-9a-fA-F_]+$`);
const sexagesimalInt = new RegExp(`^${sign}[0-9][0-9_]*(?::[0-5]?[0-9])+$`);
const infinityOrNaN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const exponentFloat = new RegExp(`^${sign}(?:[0-9][0-9_]*)?(?:\\.[0-9_]*)?[eE][-+]?[0-9]+$`);
const pointFloat = new RegExp(`^${sign}(?:[0-9][0-9_]*)?\\.[0-9_]*$`);
const sexagesimalFloat = new RegExp(`^${sign}[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*$`);

/** `text` without its sign and underscores, and the sign as a factor. */
function unsigned(text: string): { readonly digits: string; readonly factor: 1 | -1 } {
  const signed = text.startsWith('-') || text.startsWith('+');
  return {
    digits: (signed ? text.slice(1) : text).replaceAll('_', ''),
    factor: text.startsWith('-') ? -1 : 1,
  };
}

/** Base-60 `h:mm:ss(.fff)`, each part multiplying what came before by 60. */
function sexagesimal(text: string): number {
  const { digits, factor } = unsigned(text);
  return factor * digits.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

/** An integer in `prefixLength` characters of prefix (after the sign) and `radix`. */
function radixInt(text: string, prefixLength: number, radix: number): number {
  const { digits, factor } = unsigned(text);
  return factor * Number.parseInt(digits.slice(prefixLength), radix);
}

/** The number, or NOT_RESOLVED for NaN: a pattern matched a text without a digit (`0_`). */
function numberOrString(value: number): number | typeof NOT_RESOLVED {
  return Number.isNaN(value) ? NOT_RESOLVED : value;
}

/** The integer a plain scalar means in YAML 1.1, or NOT_RESOLVED. */
function readYaml11Int(text: string): number | typeof NOT_RESOLVED {
  if (binaryInt.test(text)) return numberOrString(radixInt(text, 2, 2));
  if (octalInt.test(text)) return numberOrString(radixInt(text, 1, 8));
  if (decimalInt.test(text)) return radixInt(text, 0, 10);
  if (hexInt.test(text)) return numberOrString(radixInt(text, 2, 16));
  if (sexagesimalInt.test(text)) return sexagesimal(text);
  return NOT_RESOLVED;
}

/** The float a plain scalar means in YAML 1.1, or NOT_RESOLVED. */
function readYaml11Float(text: string): number | typeof NOT_RESOLVED {
  if (infinityOrNaN.test(text)) {
    if (text.toLowerCase().endsWith('nan')) return Number.NaN;
    return text.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (exponentFloat.test(text) || pointFloat.test(text)) {
    return numberOrString(Number.parseFloat(text.replaceAll('_', '')));
  }
  if (sexagesimalFloat.test(text)) return sexagesimal(text);
  return NOT_RESOLVED;
}

const numberFirstChars = ['-', '+', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];

/** Read-only tags: this schema only loads. */
const neverDumped = (): boolean => false;

export const yaml11Schema = YAML11_SCHEMA.withTags(
  defineScalarTag('tag:yaml.org,2002:int', {
    implicit: true,
    implicitFirstChars: numberFirstChars,
    resolve: readYaml11Int,
    identify: neverDumped,
  }),
  defineScalarTag('tag:yaml.org,2002:float', {
    implicit: true,
    implicitFirstChars: numberFirstChars,
    resolve: readYaml11Float,
    identify: neverDumped,
  }),
);
