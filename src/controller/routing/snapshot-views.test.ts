import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { SnapshotViews } from './snapshot-views.ts';

function slice(service: string, name: string, address: string): V1EndpointSlice {
  return {
    metadata: { namespace: 'app', name, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [{ addresses: [address], conditions: { ready: true } }],
  };
}

describe('SnapshotViews', () => {
  it('shares a Service slice list while its slices stand, and makes a new one when one changes', () => {
    const views = new SnapshotViews();
    const a1 = slice('a', 'a-1', '10.0.0.1');
    const a2 = slice('a', 'a-2', '10.0.0.2');
    const b1 = slice('b', 'b-1', '10.0.1.1');
    const first = views.endpointSlices([a1, a2, b1]);
    const second = views.endpointSlices([a1, a2, b1]);
    expect(second.get('app/a')).toBe(first.get('app/a'));
    expect(second.get('app/b')).toBe(first.get('app/b'));
    const changed = slice('b', 'b-1', '10.0.1.9');
    const third = views.endpointSlices([a1, a2, changed]);
    expect(third.get('app/a')).toBe(first.get('app/a'));
    expect(third.get('app/b')).not.toBe(first.get('app/b'));
    expect(third.get('app/b')?.[0]?.endpoints).toEqual([{ addresses: ['10.0.1.9'], ready: true }]);
  });

  it('gives the previous map of slice lists, Services and Secrets while every entry stands, and a new one when one changes, comes or goes', () => {
    const views = new SnapshotViews();
    const a1 = slice('a', 'a-1', '10.0.0.1');
    const b1 = slice('b', 'b-1', '10.0.1.1');
    const first = views.endpointSlices([a1, b1]);
    expect(views.endpointSlices([a1, b1])).toBe(first);
    const moved = views.endpointSlices([a1, slice('b', 'b-1', '10.0.1.2')]);
    expect(moved).not.toBe(first);
    expect(views.endpointSlices([a1])).not.toBe(moved);
    const service = (name: string): V1Service => ({
      metadata: { namespace: 'app', name },
      spec: { ports: [{ name: 'http', port: 80 }] },
    });
    const web = service('web');
    const services = views.services([web]);
    expect(views.services([web])).toBe(services);
    expect(views.services([service('web')])).not.toBe(services);
    const secret = { metadata: { namespace: 'app', name: 'tls' }, data: {} };
    const secrets = views.secrets([secret]);
    expect(views.secrets([secret])).toBe(secrets);
    expect(views.secrets([secret, { metadata: { namespace: 'app', name: 'other' } }])).not.toBe(
      secrets,
    );
  });

  it('leaves out slices of no Service and reads readiness as the API means it', () => {
    const views = new SnapshotViews();
    const orphan = slice('x', 'x-1', '10.0.0.1');
    orphan.metadata = { name: 'x-1' };
    const notReady = slice('c', 'c-1', '10.0.2.1');
    notReady.endpoints = [
      { addresses: ['10.0.2.1'], conditions: { ready: false } },
      { addresses: ['10.0.2.2'] },
    ];
    const lists = views.endpointSlices([orphan, notReady]);
    expect([...lists.keys()]).toEqual(['app/c']);
    expect(lists.get('app/c')?.[0]?.endpoints.map((e) => e.ready)).toEqual([false, true]);
  });

  it('keeps a Service view per object', () => {
    const views = new SnapshotViews();
    const service: V1Service = {
      metadata: { namespace: 'app', name: 'web' },
      spec: { ports: [{ name: 'http', port: 80 }] },
    };
    expect(views.services([service]).get('app/web')).toBe(views.services([service]).get('app/web'));
  });

  it('keeps the FQDN answers while every answer is the same object', () => {
    const views = new SnapshotViews();
    const answer = { addresses: ['10.0.0.1'] };
    const first = views.resolutions(new Map([['db.example.com', answer]]));
    expect(views.resolutions(new Map([['db.example.com', answer]]))).toBe(first);
    const other = views.resolutions(new Map([['db.example.com', { addresses: ['10.0.0.2'] }]]));
    expect(other).not.toBe(first);
  });
});
