import { describe, expect, it } from 'vitest';
import type { ValidationReport } from '../validation/index.ts';
import { type RoutingReviewer, routingKindRoutes } from './routing-validators.ts';

const reviewed: string[] = [];
const reviewer: RoutingReviewer = {
  reviewIngress: (_next, namespace) => {
    reviewed.push(`Ingress in ${namespace}`);
    return Promise.resolve({ allowed: true, findings: [] });
  },
  reviewTemplateConfig: (_next, namespace) => {
    reviewed.push(`HAProxyTemplateConfig in ${namespace}`);
    const denied: ValidationReport = {
      allowed: false,
      findings: [
        { code: 'TemplateConfigInvalid', severity: 'error', path: 'spec', message: 'No.' },
      ],
    };
    return Promise.resolve(denied);
  },
};
const routes = routingKindRoutes(reviewer, { namespace: 'haptic', name: 'haptic' });
const templateConfig = {
  group: 'haproxy-haptic.org',
  version: 'v1alpha1',
  kind: 'HAProxyTemplateConfig',
};
const ingress = { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' };
const review = { deadline: Number.POSITIVE_INFINITY, signal: new AbortController().signal };

describe('routing admission routes', () => {
  it.each([
    ['another name in the controller namespace', 'haptic', 'other'],
    ['the same name in another namespace', 'tenant', 'haptic'],
    ['an empty name', 'haptic', ''],
    ['a name that only starts like ours', 'haptic', 'haptic-2'],
  ])('leave a HAProxyTemplateConfig with %s alone (no validator, no render)', (_, ns, name) => {
    expect(routes(templateConfig, ns, name)).toBeUndefined();
  });

  it('review the HAProxyTemplateConfig the controller renders', async () => {
    reviewed.length = 0;
    const validator = routes(templateConfig, 'haptic', 'haptic');
    expect(await validator?.validateCreate({}, 'haptic', review)).toMatchObject({
      allowed: false,
    });
    expect(await validator?.validateUpdate({}, {}, 'haptic', review)).toMatchObject({
      allowed: false,
    });
    expect(await validator?.validateDelete({}, 'haptic', review)).toEqual({
      allowed: true,
      findings: [],
    });
    expect(reviewed).toEqual([
      'HAProxyTemplateConfig in haptic',
      'HAProxyTemplateConfig in haptic',
    ]);
  });

  it('review Ingresses of any namespace (the reviewer decides whether the class is ours)', async () => {
    reviewed.length = 0;
    await routes(ingress, 'tenant', 'web')?.validateCreate({}, 'tenant', review);
    expect(reviewed).toEqual(['Ingress in tenant']);
  });

  it('route nothing else', () => {
    expect(routes({ group: 'apps', version: 'v1', kind: 'Deployment' }, 'haptic', 'haptic')).toBe(
      undefined,
    );
    expect(routes({ ...templateConfig, group: 'example.com' }, 'haptic', 'haptic')).toBe(undefined);
  });
});
