import { describe, expect, it } from 'vitest';
import { providerMarkers, secretProvider } from './provider-markers.ts';

describe('secret provider', () => {
  it.each([
    [
      'the default provider label',
      { labels: { 'haptic.haproxy.org/certificate-provider': 'default' } },
      'default',
    ],
    [
      'cert-manager owner annotations',
      { annotations: { 'cert-manager.io/certificate-name': 'x' } },
      'cert-manager',
    ],
    [
      'cert-manager issuer annotation alone',
      { annotations: { 'cert-manager.io/issuer-name': 'ca' } },
      'cert-manager',
    ],
    [
      'a CA-injection annotation only',
      { annotations: { 'cert-manager.io/allow-direct-injection': 'true' } },
      'external',
    ],
    [
      'another value of the provider label',
      { labels: { 'haptic.haproxy.org/certificate-provider': 'mine' } },
      'external',
    ],
    ['no marker at all', {}, 'external'],
    [
      'markers of both providers',
      {
        labels: { 'haptic.haproxy.org/certificate-provider': 'default' },
        annotations: { 'cert-manager.io/certificate-name': 'x' },
      },
      'conflicting',
    ],
  ])('classifies a Secret with %s', (_, metadata, provider) => {
    expect(secretProvider(metadata)).toBe(provider);
  });

  it('lists the markers it found', () => {
    expect(
      providerMarkers({
        labels: { 'haptic.haproxy.org/certificate-provider': 'default' },
        annotations: { 'cert-manager.io/issuer-kind': 'Issuer' },
      }),
    ).toEqual([
      'label haptic.haproxy.org/certificate-provider=default',
      'annotation cert-manager.io/issuer-kind',
    ]);
  });
});
