import { describe, expect, it } from 'vitest';
import { defaultDeadlineMs } from '../../../src/webhook/index.ts';
import {
  chartModes,
  findObject,
  helmBinaries,
  renderMode,
  webhookCaBundle,
} from './chart-fixtures.ts';

interface Webhook {
  readonly name: string;
  readonly failurePolicy: string;
  readonly sideEffects: string;
  readonly admissionReviewVersions: readonly string[];
  readonly timeoutSeconds: number;
  readonly clientConfig: { readonly caBundle?: string; readonly service: Record<string, unknown> };
  readonly namespaceSelector: unknown;
  readonly rules: unknown;
  readonly matchConditions: readonly { readonly name: string; readonly expression: string }[];
}

const webhooksOf = (body: Readonly<Record<string, unknown>>) =>
  (body as { webhooks: readonly Webhook[] }).webhooks;

describe.each(helmBinaries)('the ValidatingWebhookConfiguration rendered by %s', (binary) => {
  it("waits for every review longer than the webhook's own deadline, by the API server's rounding", async () => {
    const objects = await renderMode(binary, chartModes['gitops external certificates']);
    const webhooks = webhooksOf(
      findObject(objects, 'ValidatingWebhookConfiguration', 'haptic-haptic-webhook').body,
    );
    expect(webhooks.length).toBeGreaterThan(0);
    for (const webhook of webhooks) {
      // The review (its check included) ends at defaultDeadlineMs; the API server says how long
      // it waits rounded up to whole seconds, which the webhook takes a second off.
      expect(webhook.timeoutSeconds * 1000, webhook.name).toBeGreaterThanOrEqual(
        defaultDeadlineMs + 1000,
      );
    }
  });

  it('guards only the release identity Secrets and values Secret, without deadlocking renewal', async () => {
    const objects = await renderMode(binary, chartModes['gitops external certificates']);
    const configuration = findObject(
      objects,
      'ValidatingWebhookConfiguration',
      'haptic-haptic-webhook',
    );
    const [identity, values] = webhooksOf(configuration.body);
    for (const webhook of [identity, values]) {
      expect(webhook).toMatchObject({
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        clientConfig: {
          caBundle: webhookCaBundle,
          service: { name: 'haptic-webhook', namespace: 'haptic', path: '/validate', port: 443 },
        },
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'haptic' } },
        rules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['secrets'],
            operations: ['CREATE', 'UPDATE'],
            scope: 'Namespaced',
          },
        ],
      });
      expect(webhook?.timeoutSeconds).toBeLessThanOrEqual(10);
    }
    expect(identity?.failurePolicy).toBe('Fail');
    expect(identity?.matchConditions).toEqual([
      {
        name: 'release-identity-secret',
        expression:
          'request.name in ["haptic-agent-ca","haptic-agent-server-tls","haptic-agent-client-tls"]',
      },
      {
        name: 'not-certificate-renewal-job',
        expression:
          '!(request.userInfo.username in ["system:serviceaccount:haptic:haptic-agent-bootstrap","system:serviceaccount:haptic:haptic-agent-renewal"])',
      },
    ]);
    expect(values?.failurePolicy).toBe('Ignore');
    expect(values?.matchConditions).toEqual([
      {
        name: 'release-pre-rollout-values',
        expression: 'request.name == "haptic-haptic-pre-rollout-values"',
      },
    ]);
  });

  it('exempts nobody when another provider owns the identities', async () => {
    const objects = await renderMode(binary, {
      ...chartModes.external,
      controller: { webhook: { secretName: 'wh', caBundle: webhookCaBundle } },
    });
    const [identity] = webhooksOf(
      findObject(objects, 'ValidatingWebhookConfiguration', 'haptic-haptic-webhook').body,
    );
    expect(identity?.matchConditions).toEqual([
      {
        name: 'release-identity-secret',
        expression: 'request.name in ["haptic-agent-identity","haptic-controller-identity"]',
      },
    ]);
  });

  it('never depends on the identity Secrets it guards to start serving', async () => {
    const objects = await renderMode(binary, chartModes['gitops cert-manager']);
    for (const name of ['haptic-controller', 'haptic-haproxy']) {
      const { spec } = findObject(objects, 'Deployment', name).body as {
        spec: {
          template: { spec: { volumes: { name: string; secret?: { optional?: boolean } }[] } };
        };
      };
      const agentTls = spec.template.spec.volumes.find((v) => v.name === 'agent-tls');
      expect(agentTls?.secret?.optional).toBe(true);
    }
  });

  it('lets cert-manager inject the CA bundle', async () => {
    const objects = await renderMode(binary, chartModes['gitops cert-manager']);
    const configuration = findObject(
      objects,
      'ValidatingWebhookConfiguration',
      'haptic-haptic-webhook',
    );
    expect(configuration.metadata.annotations).toEqual({
      'cert-manager.io/inject-ca-from': 'haptic/haptic-webhook',
    });
    for (const webhook of webhooksOf(configuration.body)) {
      expect(webhook.clientConfig).not.toHaveProperty('caBundle');
    }
    findObject(objects, 'Certificate', 'haptic-webhook');
  });

  it('is not registered when turned off, whatever the certificate source', async () => {
    const objects = await renderMode(binary, {
      controller: { webhook: { enabled: false, certManager: { enabled: true } } },
    });
    expect(
      objects.filter(
        (o) => /Webhook|^Service$/.test(o.kind) && o.metadata.name.includes('webhook'),
      ),
    ).toEqual([]);
    const controller = JSON.stringify(findObject(objects, 'Deployment', 'haptic-controller').body);
    expect(controller).not.toContain('webhook-tls');
  });

  it('is registered by default with the chart’s own certificate: no caBundle rendered, the Job sets it', async () => {
    const objects = await renderMode(binary, chartModes.default);
    const configuration = findObject(
      objects,
      'ValidatingWebhookConfiguration',
      'haptic-haptic-webhook',
    );
    // Offline renders hold no certificate: the caBundle is the hook Job's to write, not
    // cert-manager's CA injector.
    expect(configuration.metadata.annotations).not.toHaveProperty('cert-manager.io/inject-ca-from');
    expect(webhooksOf(configuration.body).length).toBeGreaterThan(0);
    for (const webhook of webhooksOf(configuration.body)) {
      expect(webhook.clientConfig).not.toHaveProperty('caBundle');
    }
    const volumes = JSON.stringify(findObject(objects, 'Deployment', 'haptic-controller').body);
    expect(volumes).toContain(
      '{"name":"webhook-tls","secret":{"secretName":"haptic-webhook-default-tls"',
    );
    findObject(objects, 'Job', 'haptic-webhook-certificate');
  });

  it('serves through a Service on the controller pods and mounts the serving Secret', async () => {
    const objects = await renderMode(binary, chartModes['gitops external certificates']);
    expect(findObject(objects, 'Service', 'haptic-webhook').body.spec).toEqual({
      type: 'ClusterIP',
      selector: {
        'app.kubernetes.io/name': 'haptic',
        'app.kubernetes.io/instance': 'haptic',
        'app.kubernetes.io/component': 'controller',
      },
      ports: [{ name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' }],
    });
    const controller = JSON.stringify(findObject(objects, 'Deployment', 'haptic-controller').body);
    expect(controller).toContain('"name":"webhook","containerPort":9443');
    expect(controller).toContain('--webhook-cert-dir=/etc/haptic/webhook-tls');
  });
});
