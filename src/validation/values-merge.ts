import { isRecord } from '../is-record.ts';
/**
 * Helm's way of combining values, so the validator sees what `helm template` renders:
 * values files merge in order (maps recursively, anything else replaced, the later file wins),
 * then the result coalesces over the chart's values.yaml, where a `null` removes the key.
 */

export type Values = Readonly<Record<string, unknown>>;

/**
 * Sets `key` as an own data property, as helm holds every key: an assignment to `__proto__`
 * would set the object's prototype instead, so the validator would read keys through it that
 * the values sent to helm (JSON, own keys only) do not have.
 */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function mergeTwo(base: Values, override: Values): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = Object.hasOwn(merged, key) ? merged[key] : undefined;
    setOwn(merged, key, isRecord(current) && isRecord(value) ? mergeTwo(current, value) : value);
  }
  return merged;
}

/** Merges values files as `helm -f a -f b` does; `null` stays, to remove a default later. */
export function mergeValueLayers(layers: readonly Values[]): Record<string, unknown> {
  return layers.reduce<Record<string, unknown>>((merged, layer) => mergeTwo(merged, layer), {});
}

/** The user's values over the chart's defaults; a user `null` removes the key. */
export function coalesceValues(user: Values, defaults: Values): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(defaults)) {
    if (!Object.hasOwn(user, key)) setOwn(result, key, value);
  }
  for (const [key, value] of Object.entries(user)) {
    if (value === null) continue;
    const fallback = Object.hasOwn(defaults, key) ? defaults[key] : undefined;
    setOwn(
      result,
      key,
      isRecord(value) ? coalesceValues(value, isRecord(fallback) ? fallback : {}) : value,
    );
  }
  return result;
}
