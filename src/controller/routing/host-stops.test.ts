import { describe, expect, it } from 'vitest';
import { HostStops, notFoundBackend } from './host-stops.ts';
import type { ModelRoute } from './model-types.ts';

function route(host: string, pathType: 'Exact' | 'Prefix', path: string): ModelRoute {
  return {
    host,
    pathType,
    path,
    exactKey: `${host}${path}`,
    prefixKey: `${host}${path === '/' ? '/' : `${path}/`}`,
    backend: 'app:web:http',
    ingress: 'app/web',
    canary: false,
  };
}

const keys = (stops: HostStops): string[] => [...stops.entries()].map((entry) => entry.key).sort();

describe('HostStops', () => {
  it('stops every served host without a Prefix / route at the host, wildcards too, never the catch-all', () => {
    const stops = new HostStops([
      route('app.example.com', 'Prefix', '/app'),
      route('api.example.com', 'Exact', '/'),
      route('root.example.com', 'Prefix', '/'),
      route('root.example.com', 'Exact', '/x'),
      route('*.example.com', 'Prefix', '/.well-known/acme-challenge'),
      route('*', 'Prefix', '/login'),
    ]);
    expect(keys(stops)).toEqual(['*.example.com/', 'api.example.com/', 'app.example.com/']);
    expect([...stops.entries()].every((entry) => entry.backend === notFoundBackend)).toBe(true);
  });

  it('gives and takes stops as routes come and go, the same entry while it stands', () => {
    const app = route('app.example.com', 'Prefix', '/app');
    const root = route('app.example.com', 'Prefix', '/');
    const stops = new HostStops([app]);
    const [first] = stops.entries();

    const rooted = stops.edit([], [root]);
    expect([...rooted.removed]).toEqual([first]);
    expect(rooted.added).toEqual([]);

    const unrooted = stops.edit([root], []);
    expect(unrooted.removed.size).toBe(0);
    expect(unrooted.added.map((entry) => entry.key)).toEqual(['app.example.com/']);

    const other = stops.edit([], [route('app.example.com', 'Exact', '/y')]);
    expect(other).toEqual({ removed: new Set(), added: [] });

    const gone = stops.edit([app, route('app.example.com', 'Exact', '/y')], []);
    expect([...gone.removed].map((entry) => entry.key)).toEqual(['app.example.com/']);
    expect(keys(stops)).toEqual([]);
  });

  it('keeps a host rooted when its Prefix / route changes hands in one edit', () => {
    const old = route('app.example.com', 'Prefix', '/');
    const stops = new HostStops([old]);
    const change = stops.edit([old], [{ ...old, backend: 'team:web:http' }]);
    expect(change).toEqual({ removed: new Set(), added: [] });
    expect(keys(stops)).toEqual([]);
  });
});
