import { describe, expect, it } from 'vitest';
import { helmRelease, ociRepository } from '../../../dev/gitops/flux-provider.ts';
import { differences } from '../../../dev/gitops/release-snapshot.ts';

describe('the lifecycle suite’s Flux resources', () => {
  it('are the GitOps guide’s OCIRepository, with plain HTTP allowed for the suite’s registry', () => {
    expect(ociRepository('0.0.0-gitops.2', 'oci://10.0.0.1:5000/charts/haptic')).toEqual({
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'OCIRepository',
      metadata: { name: 'haptic', namespace: 'flux-system' },
      spec: {
        interval: '10m',
        url: 'oci://10.0.0.1:5000/charts/haptic',
        insecure: true,
        ref: { tag: '0.0.0-gitops.2' },
        layerSelector: {
          mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip',
          operation: 'copy',
        },
      },
    });
  });

  it('are the GitOps guide’s HelmRelease: RetryOnFailure for install and upgrade, the values as given', () => {
    const values = { credentials: { existingSecret: 'haptic-gitops-credentials' } };
    expect(helmRelease(values)).toEqual({
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: 'haptic', namespace: 'flux-system' },
      spec: {
        interval: '10m',
        timeout: '15m',
        releaseName: 'haptic',
        targetNamespace: 'haptic',
        chartRef: { kind: 'OCIRepository', name: 'haptic' },
        install: { strategy: { name: 'RetryOnFailure', retryInterval: '5m' } },
        upgrade: { strategy: { name: 'RetryOnFailure', retryInterval: '5m' } },
        values,
      },
    });
  });
});

describe('snapshot differences', () => {
  it('name every key whose value changed, appeared or disappeared', () => {
    expect(differences('Pod UID of', { a: '1', b: '2' }, { a: '1', b: '3', c: '4' })).toEqual([
      'Pod UID of b: 2 → 3',
      'Pod UID of c: absent → 4',
    ]);
  });

  it('compare only the keys asked for', () => {
    expect(differences('Secret', { kept: 'x', other: 'y' }, { kept: 'x' }, ['kept'])).toEqual([]);
  });
});
