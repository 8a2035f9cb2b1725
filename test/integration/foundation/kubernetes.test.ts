import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  adminKubeConfig,
  createTestNamespace,
  kubectl,
  serviceAccountKubeconfig,
} from '../../support/cluster.ts';

describe('local control plane', () => {
  it('reads back with kubectl a Secret created with @kubernetes/client-node', async () => {
    const ns = await createTestNamespace('smoke');
    const core = adminKubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'greeting' }, stringData: { message: 'hello from client-node' } },
    });
    const read = await kubectl([
      'get',
      'secret',
      'greeting',
      '-n',
      ns,
      '-o',
      'jsonpath={.data.message}',
    ]);
    expect(Buffer.from(read.stdout, 'base64').toString()).toBe('hello from client-node');
  });

  it('issues ServiceAccount tokens that RBAC then restricts', async () => {
    const ns = await createTestNamespace('rbac');
    const core = adminKubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({
      namespace: ns,
      body: { metadata: { name: 'reader' } },
    });
    const asReader = ['--kubeconfig', await serviceAccountKubeconfig(ns, 'reader')];
    const denied = await kubectl(['get', 'secrets', ...asReader]);
    expect(denied.stderr).toContain(
      `User "system:serviceaccount:${ns}:reader" cannot list resource "secrets"`,
    );
    await kubectl([
      'create',
      'role',
      'read-secrets',
      '--verb=list',
      '--resource=secrets',
      '-n',
      ns,
    ]);
    await kubectl([
      'create',
      'rolebinding',
      'reader',
      '--role=read-secrets',
      `--serviceaccount=${ns}:reader`,
      '-n',
      ns,
    ]);
    const allowed = await kubectl(['get', 'secrets', ...asReader]);
    expect(allowed.exitCode).toBe(0);
  });

  it('has the ValidatingAdmissionWebhook plugin serving its API', async () => {
    const resources = await kubectl([
      'api-resources',
      '--api-group=admissionregistration.k8s.io',
      '-o',
      'name',
    ]);
    expect(resources.stdout.split('\n')).toContain(
      'validatingwebhookconfigurations.admissionregistration.k8s.io',
    );
  });
});
