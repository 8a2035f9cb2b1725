import { describe, expect, it } from 'vitest';
import { toolPath } from '../../../dev/lib/tools.ts';
import { renderChart } from '../../../src/render/index.ts';
import {
  type HelmBinary,
  chartModeNames,
  chartModes,
  findObject,
  helmBinaries,
  renderMode,
} from './chart-fixtures.ts';

const kindsAndNames = async (binary: HelmBinary, values: Record<string, unknown>) =>
  (await renderMode(binary, values)).map((o) => `${o.kind}/${o.metadata.name}`);

describe.each(helmBinaries)('rendering with %s', (binary) => {
  it.each(chartModeNames)('is byte-identical twice in %s mode', async (mode) => {
    const options = { helmBin: toolPath(binary), values: chartModes[mode], includeCrds: true };
    const first = await renderChart(options);
    const second = await renderChart(options);
    expect(second.manifest).toBe(first.manifest);
    // Nothing derived from time or randomness could hide in a value helm prints.
    expect(first.manifest).not.toMatch(/creationTimestamp: ['"]?\d|\d{4}-\d\d-\d\dT\d\d:\d\d/);
  });

  it('names the default release objects as the guides do', async () => {
    const names = await kindsAndNames(binary, chartModes.default);
    expect(names).toEqual(
      expect.arrayContaining([
        'Deployment/haptic-controller',
        'Deployment/haptic-haproxy',
        'CronJob/haptic-agent-renewal',
        'Job/haptic-haptic-pre-rollout',
        'Job/haptic-crds',
        'Job/haptic-agent-bootstrap',
        'Job/haptic-webhook-certificate',
        'Service/haptic-haproxy',
        'Service/haptic-webhook',
        'ValidatingWebhookConfiguration/haptic-haptic-webhook',
        'IngressClass/haptic',
      ]),
    );
    // The webhook's certificate is the chart's own: no cert-manager objects.
    expect(names.filter((n) => /Certificate\/|Issuer\//.test(n))).toEqual([]);
  });

  it('keeps names distinct and within Kubernetes limits for the longest release names', async () => {
    const release = 'a'.repeat(53);
    const { objects } = await renderChart({
      helmBin: toolPath(binary),
      release,
      namespace: 'n'.repeat(63),
      values: { credentials: { existingSecret: 'creds' } },
    });
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
    for (const o of objects) {
      expect(o.metadata.name.length, o.metadata.name).toBeLessThanOrEqual(
        o.kind === 'CronJob' ? 52 : 63,
      );
    }
    const renewal = objects.find((o) => o.kind === 'CronJob');
    expect(renewal?.metadata.name).toMatch(/^a+-[0-9a-f]{8}-agent-renewal$/);
  });

  it('creates the cert-manager CA, issuer and both identities, and no renewal Jobs', async () => {
    const objects = await renderMode(binary, chartModes['cert-manager']);
    const root = findObject(objects, 'Certificate', 'haptic-agent-ca');
    expect(root.body.spec).toMatchObject({
      isCA: true,
      secretName: 'haptic-agent-ca',
      duration: '87600h',
      renewBefore: '17520h',
      privateKey: { rotationPolicy: 'Never' },
    });
    expect(findObject(objects, 'Issuer', 'haptic-agent-ca').body.spec).toEqual({
      ca: { secretName: 'haptic-agent-ca' },
    });
    expect(findObject(objects, 'Certificate', 'haptic-agent-server').body.spec).toMatchObject({
      secretName: 'haptic-agent-server-tls',
      dnsNames: ['haptic-agent'],
      usages: ['digital signature', 'server auth'],
      duration: '8760h',
      renewBefore: '720h',
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      issuerRef: { name: 'haptic-agent-ca', kind: 'Issuer', group: 'cert-manager.io' },
    });
    expect(findObject(objects, 'Certificate', 'haptic-agent-client').body.spec).toMatchObject({
      secretName: 'haptic-agent-client-tls',
      dnsNames: ['haptic-controller'],
      usages: ['digital signature', 'client auth'],
    });
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).not.toContain('CronJob/haptic-agent-renewal');
    expect(kinds).not.toContain('Job/haptic-agent-bootstrap');
  });

  it.each([
    [30, '720h', '240h', '87600h', '1440h'],
    [89, '2136h', '712h', '87600h', '4272h'],
    [90, '2160h', '720h', '87600h', '4320h'],
    [3650, '87600h', '720h', '262800h', '175200h'],
  ])(
    'gives cert-manager identities of %i days renewal at 30 days or a third, and a root that outlives them',
    async (days, duration, renewBefore, rootDuration, rootRenewBefore) => {
      const objects = await renderMode(binary, {
        haproxy: { agent: { tls: { certValidityDays: days, certManager: { enabled: true } } } },
      });
      expect(findObject(objects, 'Certificate', 'haptic-agent-server').body.spec).toMatchObject({
        duration,
        renewBefore,
      });
      expect(findObject(objects, 'Certificate', 'haptic-agent-ca').body.spec).toMatchObject({
        duration: rootDuration,
        renewBefore: rootRenewBefore,
      });
    },
  );

  it("uses the spec's existing issuer and creates no CA", async () => {
    const objects = await renderMode(binary, chartModes['cert-manager existing issuer']);
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(
      names.filter((n) => n.startsWith('Issuer/') || n === 'Certificate/haptic-agent-ca'),
    ).toEqual([]);
    for (const role of ['server', 'client']) {
      expect(findObject(objects, 'Certificate', `haptic-agent-${role}`).body.spec).toMatchObject({
        issuerRef: { name: 'organisation', kind: 'ClusterIssuer', group: 'cert-manager.io' },
      });
    }
  });

  it('issues nothing in external mode and only references the named Secrets', async () => {
    const objects = await renderMode(binary, chartModes.external);
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names.filter((n) => /Certificate|Issuer|agent-renewal|agent-bootstrap/.test(n))).toEqual(
      [],
    );
    expect(JSON.stringify(objects)).not.toContain('haptic-agent-ca');
  });

  it('has no agent-tls volume and passes the credentials Secret in legacy mode', async () => {
    const objects = await renderMode(binary, chartModes.legacy);
    const haproxy = findObject(objects, 'Deployment', 'haptic-haproxy');
    const text = JSON.stringify(haproxy.body);
    expect(text).not.toContain('agent-tls');
    expect(text).toContain('--legacy-basic-auth');
    expect(text).toContain(
      '"secretKeyRef":{"name":"haptic-gitops-credentials","key":"dataplane_password"}',
    );
  });

  it('rolls pods by a hash of the credentials Secret name, never by its content', async () => {
    const annotation = async (existingSecret: string) => {
      const objects = await renderMode(binary, { credentials: { existingSecret } });
      return ['haptic-controller', 'haptic-haproxy'].map(
        (name) =>
          (
            findObject(objects, 'Deployment', name).body as {
              spec: { template: { metadata: { annotations?: Record<string, string> } } };
            }
          ).spec.template.metadata.annotations?.['haptic.haproxy.org/credentials-secret-name-hash'],
      );
    };
    const first = await annotation('haptic-gitops-credentials');
    expect(first[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(first[1]).toBe(first[0]);
    expect(await annotation('haptic-gitops-credentials')).toEqual(first);
    expect((await annotation('haptic-other-credentials'))[0]).not.toBe(first[0]);
    // The chart never renders credentials of its own.
    const defaults = await renderMode(binary, {});
    expect(JSON.stringify(defaults)).not.toMatch(/dataplane_password/);
  });

  it('creates the self-signed localdev.me frontend certificate with the webhook one (gitops cert-manager)', async () => {
    const objects = await renderMode(binary, chartModes['gitops cert-manager']);
    expect(
      findObject(objects, 'Certificate', 'haptic-default-ssl-certificate').body.spec,
    ).toMatchObject({
      secretName: 'haptic-default-ssl-certificate',
      dnsNames: ['localdev.me', '*.localdev.me'],
      issuerRef: { name: 'haptic-selfsigned', kind: 'Issuer' },
    });
    expect(findObject(objects, 'Certificate', 'haptic-webhook').body.spec).toMatchObject({
      secretName: 'haptic-webhook-tls',
      dnsNames: [
        'haptic-webhook',
        'haptic-webhook.haptic',
        'haptic-webhook.haptic.svc',
        'haptic-webhook.haptic.svc.cluster.local',
      ],
      issuerRef: { name: 'haptic-webhook-ca' },
    });
    // Agent certificates keep their independent default renewal.
    findObject(objects, 'CronJob', 'haptic-agent-renewal');
  });

  it('references the external webhook and frontend Secrets (gitops external certificates)', async () => {
    const objects = await renderMode(binary, chartModes['gitops external certificates']);
    expect(objects.filter((o) => o.apiVersion.startsWith('cert-manager.io/'))).toEqual([]);
    const controller = JSON.stringify(findObject(objects, 'Deployment', 'haptic-controller').body);
    expect(controller).toContain('"secretName":"haptic-gitops-webhook"');
    expect(controller).toContain('--default-ssl-certificate=haptic/haptic-gitops-frontend');
  });
});
