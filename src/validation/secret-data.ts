/**
 * Secrets as the validator sees them (from an AdmissionReview or a live read). Their data is
 * decoded by `src/secrets`; everything here is hostile input.
 */
import type { SecretData } from '../secrets/layout.ts';
import { encodeBase64 } from '../secrets/secret-fields.ts';
import { isRecord } from '../is-record.ts';

export interface SecretObject {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** Values are base64, as `V1Secret.data` carries them. */
  readonly data: SecretData;
}

/** `namespace/name`, as messages name a Secret. */
export function secretLabel(secret: Pick<SecretObject, 'name' | 'namespace'>): string {
  return `${secret.namespace}/${secret.name}`;
}

function stringMap(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

/**
 * Reads a Secret from an untyped Kubernetes object. `stringData` (which the API server folds
 * into `data` before admission) is folded in here too. Returns a sentence when it is no Secret.
 */
export function readSecretObject(value: unknown, fallbackNamespace: string): SecretObject | string {
  if (!isRecord(value) || value.kind !== 'Secret') return 'The object is not a Secret.';
  const metadata = isRecord(value.metadata) ? value.metadata : {};
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : fallbackNamespace;
  // Built as own properties (a `__proto__` key stays a key, as the API server keeps it).
  const data = Object.fromEntries<string>([
    ...Object.entries(stringMap(value.data)),
    ...Object.entries(stringMap(value.stringData)).map(([key, text]): [string, string] => [
      key,
      encodeBase64(text),
    ]),
  ]);
  return {
    name,
    namespace,
    labels: stringMap(metadata.labels),
    annotations: stringMap(metadata.annotations),
    data,
  };
}
