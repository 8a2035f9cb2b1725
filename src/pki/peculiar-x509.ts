/**
 * The exports of @peculiar/x509 the product uses, each a stand-in that loads the package on
 * first use (peculiar-loader.ts) and forwards to the real export of the same name: `new`,
 * `extends`, `instanceof` and static members behave as on the real class. x509.ts offers
 * this module as the namespace `x509`; a type here is the package's type.
 */
import type * as Peculiar from '@peculiar/x509';
import { peculiarX509 } from './peculiar-loader.ts';

type Module = typeof Peculiar;
type ClassName = {
  [K in keyof Module]: Module[K] extends new (...args: never[]) => object ? K : never;
}[keyof Module];

function member(owner: object, key: string | symbol): unknown {
  const value: unknown = Reflect.get(owner, key);
  return value;
}

/** A stand-in for the class `name`. */
function lazyClass<K extends ClassName>(name: K): Module[K] {
  type Constructor = new (...args: unknown[]) => object;
  const real = (): Constructor => peculiarX509()[name] as Constructor;
  // A plain function as target: a constructor whose `prototype` the proxy may report as the real one.
  const target = function standIn(): void {
    // Never called: the proxy's traps forward every call and construction.
  };
  return new Proxy(target, {
    get: (_target, key) => member(real(), key),
    has: (_target, key) => Reflect.has(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
    construct: (_target, args: unknown[], newTarget) =>
      Reflect.construct(real(), args, newTarget as Constructor),
  }) as unknown as Module[K];
}

/** A stand-in for the constant object (enumeration) `name`. */
function lazyObject<K extends 'KeyUsageFlags' | 'ExtendedKeyUsage'>(name: K): Module[K] {
  return new Proxy(
    {},
    {
      get: (_target, key) => member(peculiarX509()[name], key),
      has: (_target, key) => Reflect.has(peculiarX509()[name], key),
    },
  ) as Module[K];
}

export type X509Certificate = Peculiar.X509Certificate;
export const X509Certificate = lazyClass('X509Certificate');
export type PublicKey = Peculiar.PublicKey;
export const PublicKey = lazyClass('PublicKey');
export const X509CertificateGenerator = lazyClass('X509CertificateGenerator');
export const BasicConstraintsExtension = lazyClass('BasicConstraintsExtension');
export const KeyUsagesExtension = lazyClass('KeyUsagesExtension');
export const ExtendedKeyUsageExtension = lazyClass('ExtendedKeyUsageExtension');
export const SubjectAlternativeNameExtension = lazyClass('SubjectAlternativeNameExtension');
export const SubjectKeyIdentifierExtension = lazyClass('SubjectKeyIdentifierExtension');
export const AuthorityKeyIdentifierExtension = lazyClass('AuthorityKeyIdentifierExtension');
export const KeyUsageFlags = lazyObject('KeyUsageFlags');
export const ExtendedKeyUsage = lazyObject('ExtendedKeyUsage');
