import type { V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { issueFirstIssuer } from './issuance.ts';
import { secretBody } from './secret-bodies.ts';

const names = { namespace: 'haptic', issuer: 'ca', server: 'server', client: 'client' } as const;
const issuer = await issueFirstIssuer({
  names: { server: 'a', client: 'b' },
  validityDays: 30,
  now: new Date('2030-01-01T00:00:00Z'),
});
const write = { target: 'issuer', material: issuer } as const;

describe('secretBody', () => {
  it('creates a labelled Secret without owner references', () => {
    const body = secretBody(write, names, undefined);
    expect(body.metadata).toEqual({
      name: 'ca',
      namespace: 'haptic',
      labels: { 'haptic.haproxy.org/certificate-provider': 'default' },
    });
    expect(body.type).toBe('Opaque');
    expect(Object.keys(body.data ?? {}).sort()).toEqual(['generation', 'tls.crt', 'tls.key']);
  });

  it('replaces conditionally on the version read, keeping what others set', () => {
    const existing: V1Secret = {
      metadata: {
        name: 'ca',
        namespace: 'haptic',
        uid: 'u-1',
        resourceVersion: '42',
        labels: { 'haptic.haproxy.org/certificate-provider': 'default', team: 'edge' },
        annotations: { 'backup.example/policy': 'daily' },
        finalizers: ['example.org/keep'],
        managedFields: [{ manager: 'kubectl' }],
      },
      type: 'Opaque',
      data: { stale: 'eA==' },
    };
    const body = secretBody(write, names, existing);
    expect(body.metadata).toEqual({
      name: 'ca',
      namespace: 'haptic',
      uid: 'u-1',
      resourceVersion: '42',
      labels: { 'haptic.haproxy.org/certificate-provider': 'default', team: 'edge' },
      annotations: { 'backup.example/policy': 'daily' },
      finalizers: ['example.org/keep'],
    });
    expect(body.data?.stale).toBeUndefined();
    expect(body.type).toBe('Opaque');
  });
});
