import { KeyObject } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import {
  certManagerMarker,
  defaultMarker,
  identityData,
  makeCa,
  makeLeaf,
  now,
  secret,
} from '../../test/unit/validation/material.ts';
import type { SecretObject } from './secret-data.ts';
import {
  type AgentIdentityConfig,
  secretWriteRole,
  validateSecretWrite,
} from './validate-secret-write.ts';

const config: AgentIdentityConfig = {
  namespace: 'haptic',
  provider: 'default',
  issuerSecret: 'haptic-agent-ca',
  serverSecret: 'haptic-agent-server-tls',
  clientSecret: 'haptic-agent-client-tls',
  serverName: 'haptic-agent',
  clientName: 'haptic-controller',
};

const ca = await makeCa();
const agent = await makeLeaf('agent', 'haptic-agent', ca);
const controller = await makeLeaf('controller', 'haptic-controller', ca);
const server = secret(
  'haptic-agent-server-tls',
  identityData({ leaf: agent, trust: [ca.certificate] }),
  { labels: defaultMarker },
);

function codes(
  old: SecretObject | undefined,
  next: SecretObject | undefined,
  operation: 'CREATE' | 'UPDATE' | 'DELETE' = 'UPDATE',
): string[] {
  // As the webhook routes: only a Secret of the release has a role, and a validator.
  const subject = next ?? old;
  const role =
    subject === undefined ? undefined : secretWriteRole(config, subject.namespace, subject.name);
  if (role === undefined) return ['allowed'];
  const verdict = validateSecretWrite({ role, operation, old, next, config, now });
  return verdict.findings
    .map((f) => `${f.severity}:${f.code}`)
    .concat(verdict.allowed ? ['allowed'] : ['denied']);
}

describe('validateSecretWrite', () => {
  it('knows which of the release Secrets a name is', () => {
    expect(secretWriteRole(config, 'haptic', 'haptic-agent-ca')).toBe('issuer');
    expect(secretWriteRole(config, 'haptic', 'haptic-agent-server-tls')).toBe('server');
    expect(secretWriteRole(config, 'haptic', 'haptic-agent-client-tls')).toBe('client');
    expect(secretWriteRole(config, 'other', 'haptic-agent-client-tls')).toBeUndefined();
    expect(secretWriteRole(config, 'haptic', 'unrelated')).toBeUndefined();
  });

  it('allows an unchanged identity', () => {
    expect(codes(server, server)).toEqual(['allowed']);
  });

  it('allows any write to a Secret that is not the release’s', () => {
    expect(codes(undefined, secret('unrelated', {}), 'CREATE')).toEqual(['allowed']);
  });

  it('denies a cert-manager annotation on a default-provider Secret', () => {
    const annotated = { ...server, annotations: certManagerMarker };
    expect(codes(server, annotated)).toEqual(['error:ProviderTakeover', 'denied']);
  });

  it('denies a key that does not match, and reports the takeover beside it', () => {
    const mismatched: SecretObject = {
      ...server,
      labels: {},
      data: identityData({ leaf: agent, key: controller.keys, trust: [ca.certificate] }),
    };
    expect(codes(server, mismatched)).toEqual([
      'error:ProviderTakeover',
      'error:KeyMismatch',
      'denied',
    ]);
  });

  it('denies the controller identity in the agent Secret', () => {
    const swapped = {
      ...server,
      data: identityData({ leaf: controller, trust: [ca.certificate] }),
    };
    expect(codes(server, swapped)).toEqual(['error:IdentityWrongPurpose', 'denied']);
  });

  it('names an unrelated CA before the chain failure it causes', async () => {
    const unrelated = await makeCa('unrelated-ca');
    const replaced = {
      ...server,
      data: identityData({ leaf: agent, trust: [unrelated.certificate] }),
    };
    expect(codes(server, replaced)).toEqual([
      'error:UnrelatedCaReplacement',
      'error:IdentityUntrusted',
      'denied',
    ]);
  });

  it('reads only the trust fields of the old object: an unreadable old tls.key still meets the history checks', async () => {
    const unrelated = await makeCa('unrelated-ca');
    const brokenKey = { ...server, data: { ...server.data, 'tls.key': 'bm9uc2Vuc2U=' } };
    const replaced = {
      ...server,
      data: identityData({ leaf: agent, trust: [unrelated.certificate] }),
    };
    expect(codes(brokenKey, replaced)).toEqual([
      'error:UnrelatedCaReplacement',
      'error:IdentityUntrusted',
      'denied',
    ]);
  });

  it('skips the history checks when the old trust fields are unreadable', async () => {
    const unrelated = await makeCa('unrelated-ca');
    const brokenTrust = { ...server, data: { ...server.data, 'ca.crt': 'bm9uc2Vuc2U=' } };
    const replaced = {
      ...server,
      data: identityData({ leaf: agent, trust: [unrelated.certificate] }),
    };
    expect(codes(brokenTrust, replaced)).toEqual(['error:IdentityUntrusted', 'denied']);
  });

  it('denies both writes of a CA replacement split in two (add beside, then drop the old)', async () => {
    const unrelated = await makeCa('unrelated-ca');
    const added = {
      ...server,
      data: identityData({ leaf: agent, trust: [ca.certificate, unrelated.certificate] }),
    };
    const alone = {
      ...server,
      data: identityData({ leaf: agent, trust: [unrelated.certificate] }),
    };
    expect(codes(server, added)).toEqual(['error:UnrelatedCaReplacement', 'denied']);
    // The first write was denied, so the second meets the old CA again.
    expect(codes(server, alone)).toEqual([
      'error:UnrelatedCaReplacement',
      'error:IdentityUntrusted',
      'denied',
    ]);
  });

  it('makes no private key to judge a write: key matches compare the key’s public half', () => {
    const made = vi.spyOn(KeyObject.prototype, 'toCryptoKey');
    try {
      const renewed = {
        ...server,
        data: identityData({ leaf: agent, key: controller.keys, trust: [ca.certificate] }),
      };
      expect(codes(server, renewed)).toEqual(['error:KeyMismatch', 'denied']);
      expect(codes(renewed, server)).toEqual(['allowed']);
      expect(made).not.toHaveBeenCalled();
    } finally {
      made.mockRestore();
    }
  });

  it('allows deleting an identity with a warning', () => {
    expect(codes(server, undefined, 'DELETE')).toEqual(['warning:SecretDeleted', 'allowed']);
  });

  it('validates the issuer with the provider’s layout', () => {
    const issuer = secret(
      'haptic-agent-ca',
      identityData({ leaf: agent, trust: [ca.certificate] }),
      {
        labels: defaultMarker,
      },
    );
    expect(codes(undefined, issuer, 'CREATE')).toEqual(['error:SecretUnparsable', 'denied']);
  });
});
