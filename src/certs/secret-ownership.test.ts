import type { V1ObjectMeta, V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ownershipRefusal } from './secret-ownership.ts';

const names = { namespace: 'haptic', issuer: 'ca', server: 'server', client: 'client' } as const;
const ours = { 'haptic.haproxy.org/certificate-provider': 'default' };
const tls = (metadata: V1ObjectMeta): V1Secret => ({ metadata, type: 'kubernetes.io/tls' });
const none = { issuer: undefined, server: undefined, client: undefined };

describe('ownershipRefusal', () => {
  const cases: readonly [string, Parameters<typeof ownershipRefusal>[0], string | undefined][] = [
    ['accepts absent Secrets', none, undefined],
    [
      'accepts its own Secrets, an Opaque issuer and TLS identities',
      {
        issuer: { metadata: { labels: ours }, type: 'Opaque' },
        server: tls({ labels: ours }),
        client: tls({ labels: { ...ours, team: 'edge' } }),
      },
      undefined,
    ],
    [
      'refuses a Secret carrying cert-manager annotations',
      { ...none, server: tls({ annotations: { 'cert-manager.io/certificate-name': 'agent' } }) },
      'Secret haptic/server (agent (server) identity) belongs to cert-manager (annotation cert-manager.io/certificate-name);',
    ],
    [
      'refuses a Secret without the default-provider label',
      { ...none, issuer: { metadata: { labels: { app: 'x' } }, type: 'Opaque' } },
      'Secret haptic/ca (issuer) belongs to an external owner (no label haptic.haproxy.org/certificate-provider=default);',
    ],
    [
      'refuses a Secret marked by both providers',
      {
        ...none,
        client: tls({ labels: ours, annotations: { 'cert-manager.io/issuer-name': 'ca' } }),
      },
      'Remove the markers of the provider that does not own it',
    ],
    [
      'refuses an identity of its own that is not a TLS Secret',
      { ...none, client: { metadata: { labels: ours }, type: 'Opaque' } },
      'has type Opaque, not kubernetes.io/tls',
    ],
  ];
  for (const [sentence, snapshot, expected] of cases) {
    it(sentence, () => {
      const refusal = ownershipRefusal(snapshot, names);
      if (expected === undefined) expect(refusal).toBeUndefined();
      else expect(refusal?.message).toContain(expected);
    });
  }
});
