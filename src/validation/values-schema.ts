/**
 * The chart's values.schema.json, applied with ajv: every violation becomes a finding with the
 * exact values path (`haproxy.agent.tls.foo`) and what to change.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { validationCodes } from './codes.ts';
import { type Finding, clause, error } from './finding.ts';

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

/**
 * Compiles the chart's schema once; the returned check is reused for every validation. Schema
 * keywords ajv does not know are ignored, as helm ignores them.
 */
export function compileValuesSchema(schema: object): ValuesSchemaCheck {
  const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, verbose: true });
  const validate: ValidateFunction = ajv.compile(schema);
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
