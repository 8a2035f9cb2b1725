import { afterAll, describe, expect, it } from 'vitest';
import { validationCodes } from '../validation/index.ts';
import { defaultDeadlineMs } from '../webhook/index.ts';
import { ConfigPipeline } from './config-pipeline.ts';
import { createRoutingReviewer } from './routing-reviewer.ts';

// Nothing here reaches haproxy -c: the hostile template never finishes rendering.
const pipeline = new ConfigPipeline({
  ingressClass: 'haptic',
  check: { socket: '/nonexistent/check.sock' },
});
afterAll(() => pipeline.close());

/** A template that loops 400,000,000 times in little memory: longer than any review may take. */
const hostile = {
  apiVersion: 'haproxy-haptic.org/v1alpha1',
  kind: 'HAProxyTemplateConfig',
  metadata: { namespace: 'haptic', name: 'haptic', uid: 'u', resourceVersion: '7' },
  spec: {
    haproxyConfig: {
      template:
        '{% for i in (1..20000) %}{% for j in (1..20000) %}{% endfor %}{% endfor %}global\n',
    },
  },
};

const ingress = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { namespace: 'app', name: 'web', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: {
    ingressClassName: 'haptic',
    rules: [
      {
        host: 'web.example.com',
        http: {
          paths: [
            {
              path: '/',
              pathType: 'Prefix',
              backend: { service: { name: 'web', port: { number: 80 } } },
            },
          ],
        },
      },
    ],
  },
};

/** A reviewer over an empty cluster whose HAProxyTemplateConfig is `config`. */
function reviewerOf(config: typeof hostile, concurrency?: number) {
  return createRoutingReviewer({
    watch: {
      snapshot: () => ({
        ingresses: [],
        services: new Map(),
        endpointSlices: new Map(),
        secrets: new Map(),
        fqdnNames: new Map(),
      }),
      templateConfig: () => config,
      ourClassIsDefault: () => false,
    },
    pipeline,
    ingressClass: 'haptic',
    namespace: 'haptic',
    templateConfigName: 'haptic',
    ...(concurrency === undefined ? {} : { concurrency }),
  });
}

describe('a routing review under a hostile template', () => {
  it('is denied with the reason before the webhook deadline, counting the wait for a slot', async () => {
    // One slot: the second review waits for the first, and its time runs meanwhile.
    const reviewer = reviewerOf(hostile, 1);
    const started = performance.now();
    const answered = (report: Awaited<ReturnType<typeof reviewer.reviewIngress>>) => ({
      report,
      ms: performance.now() - started,
    });
    const [first, second] = await Promise.all([
      reviewer.reviewIngress(ingress, 'app').then(answered),
      reviewer.reviewTemplateConfig(hostile, 'haptic').then(answered),
    ]);
    expect(first.report).toMatchObject({
      allowed: false,
      findings: [
        {
          code: validationCodes.TemplateConfigInvalid,
          severity: 'error',
          // Liquid's own time limit (set to what is left) or the kill after it ends the render.
          message: expect.stringMatching(
            /^With Ingress app\/web: HAProxyTemplateConfig haptic\/haptic: rendering .*(template render limit exceeded|did not finish within the \d+ ms left before the request's deadline)/,
          ) as unknown,
        },
      ],
    });
    expect(second.report).toMatchObject({
      allowed: false,
      findings: [
        {
          code: validationCodes.TemplateConfigInvalid,
          severity: 'error',
          message: expect.stringContaining(
            'HAProxyTemplateConfig in haptic: HAProxyTemplateConfig haptic/haptic: rendering did not start before the deadline of the request; retry when the controller is less busy.',
          ) as unknown,
        },
      ],
    });
    // Both answered once the first review's time ran out, before the webhook's deadline.
    expect(first.ms).toBeGreaterThan(defaultDeadlineMs - 1_000);
    expect(second.ms).toBeLessThan(defaultDeadlineMs);
  });
});

describe('a routing review whose haproxy -c cannot run', () => {
  it('is allowed with a RenderUnchecked warning, not denied as a rejection', async () => {
    const plain = {
      ...hostile,
      metadata: { ...hostile.metadata, uid: 'plain' },
      spec: { haproxyConfig: { template: 'global\n  maxconn 100\n' } },
    };
    const reviewer = reviewerOf(plain);
    const report = await reviewer.reviewIngress(ingress, 'app');
    expect(report).toEqual({
      allowed: true,
      findings: [
        {
          code: validationCodes.RenderUnchecked,
          severity: 'warning',
          path: 'spec.haproxyConfig.template',
          message: expect.stringMatching(
            /^With Ingress app\/web: not checked at admission, haproxy -c could not check the rendered configuration: The check sandbox at \/nonexistent\/check\.sock cannot be reached .* The controller checks it before delivery\.$/,
          ) as unknown,
        },
      ],
    });
  });
});
