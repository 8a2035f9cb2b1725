/**
 * The smallest `Reflect` metadata store that @peculiar/x509's dependency injection
 * container (tsyringe) needs. tsyringe refuses to load unless `Reflect.getMetadata` exists,
 * and the project adds no polyfill package for three functions. Installed only when absent,
 * so a full polyfill loaded earlier wins.
 *
 * Imported by peculiar-loader.ts before it loads @peculiar/x509.
 */

type MetadataKey = unknown;
type PropertyKey = string | symbol | undefined;

const store = new WeakMap<object, Map<PropertyKey, Map<MetadataKey, unknown>>>();

function ownMap(
  target: object,
  property: PropertyKey,
  create: boolean,
): Map<MetadataKey, unknown> | undefined {
  let byProperty = store.get(target);
  if (byProperty === undefined) {
    if (!create) return undefined;
    byProperty = new Map();
    store.set(target, byProperty);
  }
  let entries = byProperty.get(property);
  if (entries === undefined && create) {
    entries = new Map();
    byProperty.set(property, entries);
  }
  return entries;
}

function defineMetadata(
  key: MetadataKey,
  value: unknown,
  target: object,
  property?: PropertyKey,
): void {
  ownMap(target, property, true)?.set(key, value);
}

function getOwnMetadata(key: MetadataKey, target: object, property?: PropertyKey): unknown {
  return ownMap(target, property, false)?.get(key);
}

function getMetadata(key: MetadataKey, target: object, property?: PropertyKey): unknown {
  for (
    let current: object | null = target;
    current !== null;
    current = Object.getPrototypeOf(current) as object | null
  ) {
    const entries = ownMap(current, property, false);
    if (entries?.has(key) === true) return entries.get(key);
  }
  return undefined;
}

if (!('getMetadata' in Reflect)) {
  for (const [name, value] of Object.entries({ defineMetadata, getOwnMetadata, getMetadata })) {
    Object.defineProperty(Reflect, name, { value, writable: true, configurable: true });
  }
}
