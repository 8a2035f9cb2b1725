import { describe, expect, it } from 'vitest';
import { certManagerMarker, defaultMarker, secret } from '../../test/unit/validation/material.ts';
import { providerTakeoverByRelease, providerTakeoverOnWrite } from './provider-rules.ts';

const advice =
  "A provider must not take over another provider's Secret: use new Secret names when changing providers, and keep the old Secrets until haptic-controller and haptic-haproxy are ready.";

describe('provider takeover on a write', () => {
  it('accepts a write that keeps the provider', () => {
    expect(
      providerTakeoverOnWrite({
        name: 'id',
        label: 'haptic/id',
        before: { labels: defaultMarker },
        after: { labels: defaultMarker },
        configured: 'default',
      }),
    ).toBeUndefined();
  });

  it('rejects a cert-manager annotation added to a default-provider Secret', () => {
    expect(
      providerTakeoverOnWrite({
        name: 'id',
        label: 'haptic/id',
        before: { labels: defaultMarker },
        after: { labels: defaultMarker, annotations: certManagerMarker },
        configured: 'default',
      }),
    ).toEqual({
      code: 'ProviderTakeover',
      severity: 'error',
      path: 'secret/id/metadata',
      message: `Secret haptic/id is managed by the default provider (the renewal Job) (label haptic.haproxy.org/certificate-provider=default); this change would make it managed by both the default provider and cert-manager (label haptic.haproxy.org/certificate-provider=default, annotation cert-manager.io/certificate-name, annotation cert-manager.io/issuer-name). ${advice}`,
    });
  });

  it('rejects creating an unmarked Secret where the default provider writes', () => {
    expect(
      providerTakeoverOnWrite({
        name: 'id',
        label: 'haptic/id',
        before: undefined,
        after: {},
        configured: 'default',
      })?.message,
    ).toBe(
      `Secret haptic/id belongs to the default provider (the renewal Job) in this release, but this write marks it for an external owner (no provider marker). ${advice}`,
    );
  });
});

describe('provider takeover by a release', () => {
  const planned = {
    name: 'haptic-agent-server-tls',
    role: 'server',
    provider: 'cert-manager',
    source: 'haproxy.agent.tls.serverSecretName',
    readable: true,
  } as const;

  it('accepts a Secret its planned provider already owns', () => {
    expect(
      providerTakeoverByRelease(
        planned,
        secret('haptic-agent-server-tls', {}, { annotations: certManagerMarker }),
      ),
    ).toBeUndefined();
  });

  it('rejects switching a default-provider Secret to cert-manager', () => {
    expect(
      providerTakeoverByRelease(
        planned,
        secret('haptic-agent-server-tls', {}, { labels: defaultMarker }),
      ),
    ).toEqual({
      code: 'ProviderTakeover',
      severity: 'error',
      path: 'haproxy.agent.tls.serverSecretName',
      message: `haproxy.agent.tls.serverSecretName names Secret haptic/haptic-agent-server-tls, which is managed by the default provider (the renewal Job) (label haptic.haproxy.org/certificate-provider=default); this release would manage it with cert-manager. ${advice}`,
    });
  });

  it('ignores the credentials Secret, which no certificate provider writes', () => {
    expect(
      providerTakeoverByRelease(
        { ...planned, role: 'credentials', provider: undefined },
        secret('haptic-agent-server-tls', {}, { labels: defaultMarker }),
      ),
    ).toBeUndefined();
  });
});
