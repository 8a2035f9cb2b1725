/**
 * The admission validators of Secrets (the third layer): what to say about a create, an update
 * or a delete of one Secret. They never see HTTP; they return the shared validator's reports.
 * `secretValidator` reads the reviewed objects as Secrets at their edge.
 */
import {
  type AgentIdentityConfig,
  type EmbeddedChart,
  type Finding,
  type ReleaseIo,
  type SecretObject,
  type SecretWriteOperation,
  type ValidationReport,
  readSecretObject,
  secretLabel,
  secretWriteRole,
  validateRelease,
  validateSecretWrite,
  validationCodes,
} from '../validation/index.ts';
import type { SecretDecoder } from '../secrets/secret-decoder.ts';
import { readableBytes } from '../secrets/secret-fields.ts';
import { parseValues } from '../validation/parse-values.ts';
import { sameChartVersion } from '../validation/version-guard.ts';
import {
  InvalidObject,
  type NameRoutes,
  type ObjectAdmissionValidator,
} from './object-validators.ts';

export interface AdmissionValidator {
  validateCreate(next: SecretObject): Promise<ValidationReport>;
  validateUpdate(old: SecretObject, next: SecretObject): Promise<ValidationReport>;
  validateDelete(old: SecretObject): Promise<ValidationReport>;
}

function secretOf(value: unknown, namespace: string, which: 'old' | 'new'): SecretObject {
  const secret = readSecretObject(value, namespace);
  if (typeof secret === 'string') {
    throw new InvalidObject(`The ${which} object is invalid: ${secret}`);
  }
  return secret;
}

/** A Secret validator for reviewed objects: each is read as a Secret first (400 when it is none). */
export function secretValidator(validator: AdmissionValidator): ObjectAdmissionValidator {
  return {
    validateCreate: (next, namespace) => validator.validateCreate(secretOf(next, namespace, 'new')),
    validateUpdate: (old, next, namespace) =>
      validator.validateUpdate(secretOf(old, namespace, 'old'), secretOf(next, namespace, 'new')),
    validateDelete: (old, namespace) => validator.validateDelete(secretOf(old, namespace, 'old')),
  };
}

/**
 * The release's agent identity and issuer Secrets: the Secret's role is found once, from the
 * reviewed name, and the validator for that role judges the write.
 */
export function identitySecretRoutes(
  config: AgentIdentityConfig,
  decoder: SecretDecoder,
  clock: () => Date,
): NameRoutes {
  return (namespace, name) => {
    const role = secretWriteRole(config, namespace, name);
    if (role === undefined) return undefined;
    const run = (
      operation: SecretWriteOperation,
      old: SecretObject | undefined,
      next: SecretObject | undefined,
    ): Promise<ValidationReport> =>
      Promise.resolve(
        validateSecretWrite({ role, operation, old, next, config, now: clock() }, decoder),
      );
    return secretValidator({
      validateCreate: (next) => run('CREATE', undefined, next),
      validateUpdate: (old, next) => run('UPDATE', old, next),
      validateDelete: (old) => run('DELETE', old, undefined),
    });
  };
}

export interface ReleaseValidatorOptions {
  readonly release: string;
  readonly chart: EmbeddedChart;
  readonly io: ReleaseIo;
  readonly clock: () => Date;
}

/** The annotation with which the chart marks the chart version of its values Secret. */
export const chartVersionAnnotation = 'haptic.haproxy.org/chart-version';

/** The key of the values Secret that holds the release's values. */
export const valuesKey = 'values.yaml';

function single(finding: Finding): ValidationReport {
  return { allowed: finding.severity !== 'error', findings: [finding] };
}

/**
 * The pre-rollout values Secret: the full release validation of the pre-rollout Job, so a
 * server-side dry run of the Secret gives the Job's verdict early. Values for another chart
 * version pass with a warning: the Job of that chart validates them.
 */
export function valuesSecretValidator(options: ReleaseValidatorOptions): AdmissionValidator {
  const validate = async (next: SecretObject): Promise<ValidationReport> => {
    const source = `${valuesKey} of Secret ${secretLabel(next)}`;
    const bytes = readableBytes(next.data, valuesKey);
    if (bytes === undefined) {
      return single({
        code: validationCodes.ValuesUnparsable,
        severity: 'error',
        path: `secret/${next.name}/${valuesKey}`,
        message: `Secret ${secretLabel(next)} has no readable ${valuesKey}: it must hold the release's values as YAML.`,
      });
    }
    const parsed = parseValues(Buffer.from(bytes).toString('utf8'), source);
    if (!parsed.ok) return single(parsed.finding);
    const version = next.annotations[chartVersionAnnotation];
    if (version !== undefined && !sameChartVersion(version, options.chart.version)) {
      return single({
        code: validationCodes.ValuesForOtherChart,
        severity: 'warning',
        path: `secret/${next.name}/metadata`,
        message: `These values are for chart ${version}; this controller embeds chart ${options.chart.version}, so the pre-rollout Job of chart ${version} validates them.`,
      });
    }
    const request = {
      release: options.release,
      namespace: next.namespace,
      values: parsed.values,
      chart: options.chart,
      expectedChartVersion: version,
      now: options.clock(),
    };
    return validateRelease(request, options.io);
  };
  return {
    validateCreate: validate,
    validateUpdate: (_old, next) => validate(next),
    validateDelete: () => Promise.resolve({ allowed: true, findings: [] }),
  };
}
