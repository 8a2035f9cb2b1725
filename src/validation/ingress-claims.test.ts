import { describe, expect, it } from 'vitest';
import { isProblem } from './ingress-checks.ts';
import { newCrossNamespaceClaims, olderFirst } from './ingress-claims.ts';
import { readIngress } from './ingress-view.ts';
import { type ValidIngress, validateIngress } from './validate-ingress.ts';

function ingress(
  namespace: string,
  name: string,
  paths: readonly (readonly [string, string, string])[],
  created = '2026-01-01T00:00:00Z',
): ValidIngress {
  const view = readIngress({
    kind: 'Ingress',
    metadata: { namespace, name, creationTimestamp: created },
    spec: {
      rules: paths.map(([host, path, pathType]) => ({
        ...(host === '' ? {} : { host }),
        http: {
          paths: [{ path, pathType, backend: { service: { name: 'web', port: { number: 80 } } } }],
        },
      })),
    },
  });
  if (typeof view === 'string') throw new Error(view);
  const checked = validateIngress(view);
  if (isProblem(checked)) throw new Error(checked.message);
  return checked;
}

const victim = ingress('shop', 'web', [['shop.example.com', '/', 'Prefix']]);

describe('olderFirst', () => {
  it('orders by creationTimestamp, then namespace and name; an Ingress without one is the newest', () => {
    const list = [
      { namespace: 'b', name: 'x', createdAt: 2 },
      { namespace: 'a', name: 'new', createdAt: undefined },
      { namespace: 'a', name: 'y', createdAt: 2 },
      { namespace: 'z', name: 'z', createdAt: 1 },
      { namespace: 'a', name: 'x', createdAt: 2 },
    ];
    expect([...list].sort(olderFirst).map((i) => `${i.namespace}/${i.name}`)).toEqual([
      'z/z',
      'a/x',
      'a/y',
      'b/x',
      'a/new',
    ]);
  });
});

describe('newCrossNamespaceClaims', () => {
  it.each([
    [
      'the same host and path from another namespace',
      ingress('evil', 'grab', [['shop.example.com', '/', 'Prefix']]),
      undefined,
      1,
    ],
    [
      'the same path with a trailing slash',
      ingress('evil', 'grab', [['shop.example.com', '//', 'Prefix']]),
      undefined,
      1,
    ],
    [
      'the same path as ImplementationSpecific',
      ingress('evil', 'grab', [['shop.example.com', '/', 'ImplementationSpecific']]),
      undefined,
      1,
    ],
    [
      'an older Ingress updated to add the path',
      ingress('evil', 'old', [['shop.example.com', '/', 'Prefix']], '2020-01-01T00:00:00Z'),
      ingress('evil', 'old', [['evil.example.com', '/', 'Prefix']], '2020-01-01T00:00:00Z'),
      1,
    ],
  ])('denies %s', (_what, proposed, previous, count) => {
    const conflicts = newCrossNamespaceClaims(proposed, previous, [victim]);
    expect(conflicts).toHaveLength(count);
    expect(conflicts[0]).toEqual({
      field: 'spec.rules[0].http.paths[0]',
      claim: 'host shop.example.com, Prefix path /',
      holder: 'shop/web',
    });
  });

  it.each([
    [
      'another path on the same host',
      ingress('api', 'x', [['shop.example.com', '/api', 'Prefix']]),
      undefined,
    ],
    [
      'an Exact path where the holder has Prefix',
      ingress('api', 'x', [['shop.example.com', '/', 'Exact']]),
      undefined,
    ],
    [
      'the same host and path in the same namespace (oldest wins, with an Event)',
      ingress('shop', 'new', [['shop.example.com', '/', 'Prefix']]),
      undefined,
    ],
    [
      'an update that keeps a claim the stored version already had',
      ingress('evil', 'grab', [
        ['shop.example.com', '/', 'Prefix'],
        ['b.example.com', '/', 'Prefix'],
      ]),
      ingress('evil', 'grab', [['shop.example.com', '/', 'Prefix']]),
    ],
    [
      'an update of the holder itself',
      ingress('shop', 'web', [
        ['shop.example.com', '/', 'Prefix'],
        ['more.example.com', '/', 'Prefix'],
      ]),
      victim,
    ],
  ])('allows %s', (_what, proposed, previous) => {
    expect(newCrossNamespaceClaims(proposed, previous, [victim])).toEqual([]);
  });

  it('names each contested route once, with the oldest holder', () => {
    const younger = ingress(
      'other',
      'late',
      [['shop.example.com', '/', 'Prefix']],
      '2027-01-01T00:00:00Z',
    );
    const proposed = ingress('evil', 'grab', [
      ['shop.example.com', '/', 'Prefix'],
      ['shop.example.com', '/', 'Prefix'],
      ['', '/', 'Prefix'],
    ]);
    const anyHost = ingress('default', 'catch-all', [['', '/', 'Prefix']]);
    expect(newCrossNamespaceClaims(proposed, undefined, [younger, victim, anyHost])).toEqual([
      {
        field: 'spec.rules[0].http.paths[0]',
        claim: 'host shop.example.com, Prefix path /',
        holder: 'shop/web',
      },
      {
        field: 'spec.rules[2].http.paths[0]',
        claim: 'any host, Prefix path /',
        holder: 'default/catch-all',
      },
    ]);
  });
});
