/**
 * The one guard for "a JSON object": what every reader of untrusted data (Kubernetes objects,
 * request bodies, state files) checks before it looks at a field.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
