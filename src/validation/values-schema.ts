/**
 * The chart's values.schema.json, applied with ajv: every violation becomes a finding with the
 * exact values path (`haproxy.agent.tls.foo`) and what to change.
 */
import { createRequire } from 'node:module';
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import { validationCodes } from './codes.ts';
import { type Finding, clause, error } from './finding.ts';

/**
 * ajv (63 modules) loads when a schema is compiled, not with this module: a process that
 * loads the code ajv generated before (src/render/values-schema-cache.ts) never loads it.
 */
const requireHere = createRequire(import.meta.url);

/** ajv's options for the values schema. */
const ajvOptions: Options = {
  allErrors: true,
  strict: false,
  validateSchema: false,
  verbose: true,
};

/** What the kept code of a validator depends on besides the schema: ajv's options and version. */
export function validatorCodeIdentity(): string {
  const { version } = requireHere('ajv/package.json') as { version: string };
  return JSON.stringify({ ajv: version, options: ajvOptions });
}

/** A compiled values schema: values in, findings out. */
export type ValuesSchemaCheck = (values: unknown) => Finding[];

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `/haproxy/agent/tls` → `haproxy.agent.tls`; indexes as `[0]`, odd keys quoted. */
export function valuesPath(pointer: string, extra?: string): string {
  const segments = pointer === '' ? [] : pointer.slice(1).split('/');
  if (extra !== undefined) segments.push(extra);
  return segments
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, key) => {
      if (/^\d+$/.test(key)) return `${path}[${key}]`;
      if (!identifier.test(key)) return `${path}[${JSON.stringify(key)}]`;
      return path === '' ? key : `${path}.${key}`;
    }, '');
}

function shown(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return JSON.stringify(value);
}

function expectation(issue: ErrorObject): string {
  const parent: unknown = issue.parentSchema;
  const description =
    typeof parent === 'object' && parent !== null && 'description' in parent
      ? parent.description
      : undefined;
  if (typeof description !== 'string' || description === '') {
    return 'one of the forms values.schema.json allows';
  }
  const text = clause(description);
  return `${text.charAt(0).toLowerCase()}${text.slice(1)}`;
}

function describe(issue: ErrorObject): Finding {
  const path = valuesPath(issue.instancePath);
  const where = path === '' ? 'The values' : path;
  const found = shown(issue.data);
  const params: Record<string, unknown> = issue.params;
  switch (issue.keyword) {
    case 'additionalProperties': {
      const key = valuesPath(issue.instancePath, String(params.additionalProperty));
      return error(
        validationCodes.ValuesSchemaViolation,
        key,
        `${key} is not a value of this chart: remove it or correct its spelling (values.schema.json lists every key).`,
      );
    }
    case 'required': {
      const key = valuesPath(issue.instancePath, String(params.missingProperty));
      return error(validationCodes.ValuesSchemaViolation, key, `${key} is required; set it.`);
    }
    case 'type':
      return error(
        validationCodes.ValuesSchemaViolation,
        path,
        `${where} must be of type ${String(params.type).replace(',', ' or ')}, not ${found}; fix the value.`,
      );
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      return error(
        validationCodes.ValuesSchemaViolation,
        path,
        `${where} must be one of ${allowed.map((value) => JSON.stringify(value)).join(', ')}, not ${found}.`,
      );
    }
    case 'anyOf':
    case 'oneOf':
      return error(
        validationCodes.ValuesSchemaViolation,
        path,
        `${where} is ${found}, but must be ${expectation(issue)}.`,
      );
    default:
      return error(
        validationCodes.ValuesSchemaViolation,
        path,
        `${where} ${issue.message ?? 'is invalid'}, not ${found}; fix the value.`,
      );
  }
}

/** A compiled schema validator, and with `standalone` its code (ajv's standalone CommonJS module). */
export interface CompiledValidator {
  readonly validate: ValidateFunction;
  readonly code?: string;
}

/** Compiles `schema` with ajv; with `standalone`, also the validator's code, to keep. */
export function compileSchemaValidator(schema: object, standalone: boolean): CompiledValidator {
  const { Ajv } = requireHere('ajv') as typeof import('ajv');
  const ajv = new Ajv({ ...ajvOptions, ...(standalone ? { code: { source: true } } : {}) });
  const validate = ajv.compile(schema);
  if (!standalone) return { validate };
  const generate = requireHere(
    'ajv/dist/standalone',
  ) as typeof import('ajv/dist/standalone/index.js');
  return { validate, code: generate.default(ajv, validate) };
}

/** The values check of a compiled validator: violations as findings. */
export function valuesSchemaCheck(validate: ValidateFunction): ValuesSchemaCheck {
  return (values) => {
    if (validate(values)) return [];
    const issues = validate.errors ?? [];
    // One finding per failed alternative set, not one per failed alternative.
    const alternatives = issues.filter((i) => i.keyword === 'anyOf' || i.keyword === 'oneOf');
    return issues
      .filter((i) => !alternatives.some((a) => i.schemaPath.startsWith(`${a.schemaPath}/`)))
      .map(describe);
  };
}

/**
 * Compiles the chart's schema once; the returned check is reused for every validation. Schema
 * keywords ajv does not know are ignored, as helm ignores them. (The edges load the code
 * compiled by an earlier process where they can: src/render/values-schema-cache.ts.)
 */
export function compileValuesSchema(schema: object): ValuesSchemaCheck {
  return valuesSchemaCheck(compileSchemaValidator(schema, false).validate);
}
