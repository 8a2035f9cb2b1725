import { describe, expect, it } from 'vitest';
import { chartDefaults, chartSchema, valuesOf } from '../../test/unit/validation/material.ts';
import { coalesceValues } from './values-merge.ts';
import { compileValuesSchema, valuesPath } from './values-schema.ts';

const check = compileValuesSchema(chartSchema());
const defaults = chartDefaults();

function findings(flat: Record<string, unknown>): string[] {
  return check(coalesceValues(valuesOf(flat), defaults)).map((f) => `${f.path}: ${f.message}`);
}

describe('values schema', () => {
  it('accepts the chart defaults', () => {
    expect(findings({})).toEqual([]);
  });

  it.each([
    [
      'names an unknown key with its exact path',
      { 'haproxy.agent.tls.certValidityDay': 30 },
      'haproxy.agent.tls.certValidityDay: haproxy.agent.tls.certValidityDay is not a value of this chart: remove it or correct its spelling (values.schema.json lists every key).',
    ],
    [
      'names an unknown top-level key',
      { controler: {} },
      'controler: controler is not a value of this chart: remove it or correct its spelling (values.schema.json lists every key).',
    ],
    [
      'names a wrong type with what it found',
      { 'controller.replicas': 'two' },
      'controller.replicas: controller.replicas must be of type integer, not "two"; fix the value.',
    ],
    [
      'names a value out of range',
      { 'haproxy.agent.tls.certValidityDays': 5000 },
      'haproxy.agent.tls.certValidityDays: haproxy.agent.tls.certValidityDays must be <= 3650, not 5000; fix the value.',
    ],
    [
      'names a value outside an enumeration',
      { 'controller.logLevel': 'loud' },
      'controller.logLevel: controller.logLevel must be one of "trace", "debug", "info", "warn", "error", "fatal", not "loud".',
    ],
    [
      'gives one finding for a value that fits none of the alternatives',
      { 'controller.resources.requests.cpu': 'lots' },
      'controller.resources.requests.cpu: controller.resources.requests.cpu is "lots", but must be a Kubernetes resource quantity, such as 100m, 128Mi or 1.',
    ],
  ])('%s', (_, flat, finding) => {
    expect(findings(flat)).toEqual([finding]);
  });

  it('reports every violation at once', () => {
    expect(findings({ a: 1, 'controller.replicas': 0 })).toHaveLength(2);
  });
});

describe('valuesPath', () => {
  it.each([
    ['', undefined, ''],
    ['/haproxy/agent/tls', 'foo', 'haproxy.agent.tls.foo'],
    ['/imagePullSecrets/0/name', undefined, 'imagePullSecrets[0].name'],
    [
      '/controller/podAnnotations/example.com~1team',
      undefined,
      'controller.podAnnotations["example.com/team"]',
    ],
  ])('%s + %s is %s', (pointer, extra, path) => {
    expect(valuesPath(pointer, extra)).toBe(path);
  });
});
