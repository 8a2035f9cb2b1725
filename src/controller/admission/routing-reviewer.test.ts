import { afterAll, describe, expect, it } from 'vitest';
import { validationCodes } from '../../validation/index.ts';
import { defaultDeadlineMs } from '../../webhook/index.ts';
import { type ClusterSnapshot, emptySnapshot } from '../routing/cluster-snapshot.ts';
import { ConfigPipeline } from '../pipeline/config-pipeline.ts';
import { readIngress } from '../../validation/ingress-view.ts';
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

/** A reviewer over `snapshot` (an empty cluster) whose HAProxyTemplateConfig is `config`. */
function reviewerOf(
  config: typeof hostile,
  concurrency?: number,
  snapshot: ClusterSnapshot = emptySnapshot,
) {
  return createRoutingReviewer({
    watch: {
      snapshot: () => snapshot,
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

/** A review that has arrived now, with the webhook's deadline; `gone` ends it early. */
function arriving(gone = new AbortController()) {
  return { deadline: performance.now() + defaultDeadlineMs, signal: gone.signal };
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
      reviewer.reviewIngress(ingress, 'app', arriving()).then(answered),
      reviewer.reviewTemplateConfig(hostile, 'haptic', arriving()).then(answered),
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

  it('leaves the queue for a slot, unrendered, once its review is answered or given up', async () => {
    const reviewer = reviewerOf(hostile, 1);
    const busy = reviewer.reviewIngress(ingress, 'app', arriving());
    const gone = new AbortController();
    const started = performance.now();
    // The one slot is taken: the call returns with the review in the queue, and it is given up.
    const waiting = reviewer.reviewTemplateConfig(hostile, 'haptic', arriving(gone));
    gone.abort();
    expect(await waiting).toMatchObject({
      allowed: true,
      findings: [{ code: validationCodes.RenderUnchecked, severity: 'warning' }],
    });
    // At once, long before the deadline the busy review runs to.
    expect(performance.now() - started).toBeLessThan(defaultDeadlineMs / 4);
    await busy;
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
    const report = await reviewer.reviewIngress(ingress, 'app', arriving());
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

describe('a review of a proposed HAProxyTemplateConfig', () => {
  // Another namespace's Ingress, which the sender of a review may not read.
  const privateIngress = readIngress({
    ...ingress,
    metadata: { ...ingress.metadata, namespace: 'payments', name: 'admin' },
    spec: {
      ...ingress.spec,
      rules: [{ ...ingress.spec.rules[0], host: 'private-admin.payments.example' }],
    },
  });
  if (typeof privateIngress === 'string') throw new Error(privateIngress);
  const cluster: ClusterSnapshot = {
    ...emptySnapshot,
    ingresses: [privateIngress],
    services: new Map([
      ['payments/web', { namespace: 'payments', name: 'web', ports: [{ name: 'http', port: 80 }] }],
    ]),
  };
  const proposing = (template: string) => ({
    ...hostile,
    metadata: { ...hostile.metadata, uid: 'proposed' },
    spec: { haproxyConfig: { template } },
  });

  it.each([
    [
      'a route exists (a line HAProxy would refuse)',
      '{% if routes.size > 0 %}  bogus on\n{% endif %}',
    ],
    [
      'a host is private (a word the lint refuses)',
      '{% for r in routes %}{{ r.host }} x\n{% endfor %}',
    ],
  ])(
    'answers the same whatever other namespaces hold, for a template asking whether %s',
    async (_question, asking) => {
      const template = `global\n  maxconn 100\n${asking}`;
      const withObjects = await reviewerOf(hostile, undefined, cluster).reviewTemplateConfig(
        proposing(template),
        'haptic',
        arriving(),
      );
      const without = await reviewerOf(hostile).reviewTemplateConfig(
        proposing(template),
        'haptic',
        arriving(),
      );
      expect(withObjects).toEqual(without);
      expect(JSON.stringify(withObjects)).not.toContain('private-admin');
    },
  );

  it('names what fails when the template fails on its own text', async () => {
    const reviewer = reviewerOf(hostile, undefined, cluster);
    const report = await reviewer.reviewTemplateConfig(
      proposing('global\n  lua-load /tmp/x.lua\n{% for r in routes %}# {{ r.host }}\n{% endfor %}'),
      'haptic',
      arriving(),
    );
    expect(report).toMatchObject({
      allowed: false,
      findings: [
        {
          code: validationCodes.RenderedConfigForbidden,
          message: expect.stringContaining('"lua-load"') as unknown,
        },
      ],
    });
    expect(JSON.stringify(report)).not.toContain('private-admin');
  });
});
