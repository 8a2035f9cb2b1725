import { describe, expect, it } from 'vitest';
import { chartRepositorySecret } from '../../../dev/gitops/argo-controllers.ts';
import { application } from '../../../dev/gitops/argo-provider.ts';

describe('the lifecycle suite’s Argo CD resources', () => {
  it('are the GitOps guide’s Application, with the suite’s registry as the repository', () => {
    const values = { credentials: { existingSecret: 'haptic-gitops-credentials' } };
    expect(application('0.0.0-gitops.2', values, '10.0.0.1:5000/charts')).toEqual({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'haptic', namespace: 'argocd' },
      spec: {
        project: 'default',
        destination: { server: 'https://kubernetes.default.svc', namespace: 'haptic' },
        source: {
          repoURL: '10.0.0.1:5000/charts',
          chart: 'haptic',
          targetRevision: '0.0.0-gitops.2',
          helm: { releaseName: 'haptic', valuesObject: values },
        },
        syncPolicy: {
          automated: { enabled: true, prune: true, selfHeal: true },
          retry: { limit: 1 },
          syncOptions: ['ServerSideApply=true', 'DisableClientSideApplyMigration=true'],
        },
      },
    });
  });

  it('declare the chart repository as `argocd repo add --enable-oci --insecure-oci-force-http` does', () => {
    expect(chartRepositorySecret('10.0.0.1:5000/charts')).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'repo-haptic-charts',
        namespace: 'argocd',
        labels: { 'argocd.argoproj.io/secret-type': 'repository' },
      },
      stringData: {
        type: 'helm',
        name: 'haptic-charts',
        url: '10.0.0.1:5000/charts',
        enableOCI: 'true',
        insecureOCIForceHttp: 'true',
      },
    });
  });
});
