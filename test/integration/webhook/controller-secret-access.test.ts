/**
 * The controller's access to Secrets under the chart's own RBAC, against the real API server
 * and its RBAC authorizer, with the controller ServiceAccount's token: TLS Secrets of every
 * namespace through list (what the informer does), no get outside the release namespace, and
 * the live reads of a release validation — with the issuer Secret asked for as metadata only,
 * so its CA key is never sent.
 */
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { watchedSecretSelectors } from '../../../src/controller/watch/watched-secrets.ts';
import { errorCodes } from '../../../src/errors.ts';
import { createKubeLiveReader } from '../../../src/webhook/kube-live-reader.ts';
import { readLiveState } from '../../../src/webhook/release-io.ts';
import {
  createTestNamespace,
  helm,
  kubectl,
  serviceAccountKubeconfig,
} from '../../support/cluster.ts';

let release = '';
let tenant = '';
let controller: KubeConfig;

function apply(object: Record<string, unknown>) {
  return kubectl(['apply', '-f', '-'], JSON.stringify(object));
}

beforeAll(async () => {
  release = await createTestNamespace('ctl-secrets');
  tenant = await createTestNamespace('ctl-tenant');
  const rbac = await helm([
    'template',
    'haptic',
    join(projectRoot, 'chart'),
    '-n',
    release,
    '--show-only',
    'templates/controller-rbac.yaml',
  ]);
  expect(rbac.exitCode, rbac.stderr).toBe(0);
  const applied = await kubectl(['apply', '-n', release, '-f', '-'], rbac.stdout);
  expect(applied.exitCode, applied.stderr).toBe(0);
  const secrets = [
    {
      metadata: {
        name: 'haptic-agent-ca',
        namespace: release,
        labels: { 'haptic.haproxy.org/certificate-provider': 'default' },
      },
      type: 'Opaque',
      data: { 'tls.key': Buffer.from('the CA key').toString('base64') },
    },
    {
      metadata: { name: 'credentials', namespace: release },
      type: 'Opaque',
      data: { dataplane_username: Buffer.from('admin').toString('base64') },
    },
    {
      metadata: { name: 'shop-tls', namespace: tenant },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': '', 'tls.key': '' },
    },
  ];
  for (const secret of secrets) {
    const created = await apply({ apiVersion: 'v1', kind: 'Secret', ...secret });
    expect(created.exitCode, created.stderr).toBe(0);
  }
  controller = new KubeConfig();
  controller.loadFromFile(await serviceAccountKubeconfig(release, 'haptic-controller'));
});

afterAll(async () => {
  const name = `${release}-haptic-controller`;
  await kubectl([
    'delete',
    `clusterrolebinding/${name}`,
    `clusterrole/${name}`,
    '--ignore-not-found',
  ]);
});

describe("the controller's Secret access under the chart's RBAC", () => {
  it('lists TLS Secrets in every namespace, as its informer does', async () => {
    const core = controller.makeApiClient(CoreV1Api);
    const listed = await core.listSecretForAllNamespaces({ ...watchedSecretSelectors });
    expect(
      listed.items.map((secret) => `${secret.metadata?.namespace}/${secret.metadata?.name}`),
    ).toContain(`${tenant}/shop-tls`);
    expect(listed.items.map((secret) => secret.metadata?.name)).not.toContain('haptic-agent-ca');
  });

  it('cannot get a Secret outside the release namespace', async () => {
    const reader = createKubeLiveReader({ kubeConfig: controller, userAgent: 'haptic-test' });
    const read = reader.readSecret(tenant, 'shop-tls');
    await expect(read).rejects.toMatchObject({ code: errorCodes.KUBE_FORBIDDEN });
    await expect(read).rejects.toThrow(
      `The Kubernetes API refused to read Secret ${tenant}/shop-tls`,
    );
  });

  it('reads the release Secrets for a validation, the issuer as metadata only', async () => {
    const reader = createKubeLiveReader({ kubeConfig: controller, userAgent: 'haptic-test' });
    const live = await readLiveState(reader, {
      namespace: release,
      secrets: ['credentials', 'absent'],
      metadataOnly: ['haptic-agent-ca'],
      deployments: { server: 'haptic-haproxy', client: 'haptic-controller' },
    });
    expect([...live.secrets.keys()].sort()).toEqual(['credentials', 'haptic-agent-ca']);
    expect(live.secrets.get('credentials')?.data).toEqual({
      dataplane_username: Buffer.from('admin').toString('base64'),
    });
    const issuer = live.secrets.get('haptic-agent-ca');
    expect(issuer?.labels).toEqual({ 'haptic.haproxy.org/certificate-provider': 'default' });
    expect(issuer?.data).toEqual({});
  });
});
