import { describe, expect, it } from 'vitest';
import { chartDefaults, chartSchema, now } from '../../test/unit/validation/material.ts';
import { type SecretObject, compileValuesSchema } from '../validation/index.ts';
import { valuesSecretValidator } from './validators.ts';

const chart = {
  version: '1.0.0',
  defaults: chartDefaults(),
  schema: compileValuesSchema(chartSchema()),
};
const rendered: string[] = [];
const validator = valuesSecretValidator({
  release: 'haptic',
  chart,
  clock: () => now,
  io: {
    render: (values) => {
      rendered.push(JSON.stringify(values));
      return Promise.resolve([]);
    },
  },
});

function valuesSecret(values: string | undefined, version?: string): SecretObject {
  return {
    name: 'haptic-haptic-pre-rollout-values',
    namespace: 'haptic',
    labels: {},
    annotations: version === undefined ? {} : { 'haptic.haproxy.org/chart-version': version },
    data: values === undefined ? {} : { 'values.yaml': Buffer.from(values).toString('base64') },
  };
}

describe('values Secret validator', () => {
  it('runs the release validation on the values (here: a render without the Deployments)', async () => {
    const report = await validator.validateCreate(
      valuesSecret('controller:\n  replicas: 3\n', '1.0.0'),
    );
    // Both agent-tls mounts and the controller's webhook-tls.
    expect(report.findings.map((f) => f.code)).toEqual([
      'ChartRenderMismatch',
      'ChartRenderMismatch',
      'ChartRenderMismatch',
    ]);
    expect(rendered.at(-1)).toBe('{"controller":{"replicas":3}}');
  });

  it('rejects values that are not YAML', async () => {
    const report = await validator.validateUpdate(
      valuesSecret('a: ['),
      valuesSecret('a: [', '1.0.0'),
    );
    expect(report).toMatchObject({
      allowed: false,
      findings: [
        {
          code: 'ValuesUnparsable',
          path: 'values.yaml of Secret haptic/haptic-haptic-pre-rollout-values',
        },
      ],
    });
  });

  it('rejects a values Secret without values.yaml', async () => {
    expect(await validator.validateCreate(valuesSecret(undefined, '1.0.0'))).toEqual({
      allowed: false,
      findings: [
        {
          code: 'ValuesUnparsable',
          severity: 'error',
          path: 'secret/haptic-haptic-pre-rollout-values/values.yaml',
          message:
            "Secret haptic/haptic-haptic-pre-rollout-values has no readable values.yaml: it must hold the release's values as YAML.",
        },
      ],
    });
  });

  it('leaves values of another chart version to that chart’s Job, with a warning', async () => {
    const report = await validator.validateCreate(valuesSecret('unknown: 1\n', '2.0.0'));
    expect(report).toEqual({
      allowed: true,
      findings: [
        {
          code: 'ValuesForOtherChart',
          severity: 'warning',
          path: 'secret/haptic-haptic-pre-rollout-values/metadata',
          message:
            'These values are for chart 2.0.0; this controller embeds chart 1.0.0, so the pre-rollout Job of chart 2.0.0 validates them.',
        },
      ],
    });
  });

  it('allows deleting the values Secret', async () => {
    expect(await validator.validateDelete(valuesSecret(undefined))).toEqual({
      allowed: true,
      findings: [],
    });
  });
});
