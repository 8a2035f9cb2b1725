import { describe, expect, it } from 'vitest';
import { chartDefaults, valuesOf } from '../../test/unit/validation/material.ts';
import { preRolloutNames } from './chart-names.ts';
import { planRelease } from './release-plan.ts';
import { readReleaseValues } from './release-values.ts';
import { coalesceValues } from './values-merge.ts';

const defaults = chartDefaults();

function plan(release: string, flat: Record<string, unknown> = {}) {
  return planRelease(
    release,
    'haptic',
    readReleaseValues(coalesceValues(valuesOf(flat), defaults)),
  );
}

describe('release plan', () => {
  it('names the documented resources for release haptic', () => {
    const p = plan('haptic');
    expect(p).toMatchObject({
      fullname: 'haptic',
      agentProvider: 'default',
      controllerDeployment: 'haptic-controller',
      haproxyDeployment: 'haptic-haproxy',
      preRolloutJob: 'haptic-haptic-pre-rollout',
      valuesSecret: 'haptic-haptic-pre-rollout-values',
      peerNames: { server: 'haptic-agent', client: 'haptic-controller' },
    });
    expect(p.secrets.map((s) => [s.role, s.name, s.provider])).toEqual([
      ['issuer', 'haptic-agent-ca', 'default'],
      ['server', 'haptic-agent-server-tls', 'default'],
      ['client', 'haptic-agent-client-tls', 'default'],
      ['webhook', 'haptic-webhook-default-tls', 'default'],
    ]);
    expect(p.webhookSource).toBe('default');
  });

  it('names the chart’s own webhook Secret apart from cert-manager’s, and none without a webhook', () => {
    const names = (flat: Record<string, unknown>) =>
      plan('haptic', flat)
        .secrets.filter((s) => s.role === 'webhook')
        .map((s) => [s.name, s.provider, s.source]);
    expect(names({})).toEqual([
      [
        'haptic-webhook-default-tls',
        'default',
        "the chart's webhook certificate (controller.webhook)",
      ],
    ]);
    expect(names({ 'controller.webhook.certManager.enabled': true })).toEqual([
      ['haptic-webhook-tls', 'cert-manager', 'controller.webhook.secretName'],
    ]);
    expect(names({ 'controller.webhook.secretName': 'mine' })).toEqual([
      ['mine', 'external', 'controller.webhook.secretName'],
    ]);
    expect(
      names({ 'controller.webhook.enabled': false, 'controller.webhook.secretName': 'mine' }),
    ).toEqual([]);
    expect(plan('haptic', { 'controller.webhook.enabled': false }).webhookSource).toBe('none');
  });

  it('prefixes other release names with the chart name', () => {
    expect(plan('edge').controllerDeployment).toBe('edge-haptic-controller');
    expect(preRolloutNames('edge')).toEqual({
      job: 'edge-haptic-pre-rollout',
      valuesSecret: 'edge-haptic-pre-rollout-values',
    });
  });

  it('gives cert-manager its Secrets, the webhook CA included but not readable', () => {
    const p = plan('haptic', {
      'haproxy.agent.tls.certManager.enabled': true,
      'controller.webhook.certManager.enabled': true,
    });
    expect(p.secrets.map((s) => [s.role, s.name, s.provider, s.readable])).toEqual([
      ['issuer', 'haptic-agent-ca', 'cert-manager', true],
      ['server', 'haptic-agent-server-tls', 'cert-manager', true],
      ['client', 'haptic-agent-client-tls', 'cert-manager', true],
      ['webhook', 'haptic-webhook-tls', 'cert-manager', true],
      ['webhook-ca', 'haptic-webhook-ca', 'cert-manager', false],
      ['default-ssl', 'haptic-default-ssl-certificate', 'cert-manager', true],
    ]);
  });

  it('has no issuer and no default names for external identities', () => {
    const p = plan('haptic', {
      'haproxy.agent.tls.managed': false,
      'haproxy.agent.tls.serverSecretName': 'agent-id',
      'credentials.existingSecret': 'creds',
    });
    expect(p.secrets.map((s) => [s.role, s.name, s.provider])).toEqual([
      ['server', 'agent-id', 'external'],
      ['credentials', 'creds', undefined],
      ['webhook', 'haptic-webhook-default-tls', 'default'],
    ]);
  });

  it('shortens a long prefix and adds 8 hex digits of its SHA-256, keeping the suffix', () => {
    // Names helm template renders for this release (the property test covers every length).
    const release = 'a'.repeat(50);
    const p = plan(release);
    expect(p.controllerDeployment).toBe(`${'a'.repeat(43)}-0965d24c-controller`);
    expect(p.haproxyDeployment).toBe(`${'a'.repeat(46)}-0965d24c-haproxy`);
    expect(p.preRolloutJob).toBe(`${'a'.repeat(42)}-0965d24c-pre-rollout`);
    expect(p.valuesSecret).toBe(`${'a'.repeat(35)}-0965d24c-pre-rollout-values`);
    expect(p.fullname).toBe(`${release}-haptic`);
  });

  it('keeps a name that fits in 63 characters whole', () => {
    const release = 'b'.repeat(44);
    expect(plan(release).preRolloutJob).toBe(`${release}-haptic-pre-rollout`);
    expect(plan(release).preRolloutJob).toHaveLength(63);
  });
});
