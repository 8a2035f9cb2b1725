/**
 * Secrets as the validator sees them (from an AdmissionReview or a live read), and decoding of
 * their certificate data. Everything here is hostile input: problems come back as sentences,
 * never as exceptions.
 */
import type { SecretData } from '../certs/secret-material.ts';
import { describeError } from '../errors.ts';
import {
  type CryptoKey,
  type x509,
  decodeCertificateChain,
  decodePrivateKey,
} from '../pki/index.ts';
import { isMap } from './values-merge.ts';

export type { SecretData } from '../certs/secret-material.ts';

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
  if (!isMap(value)) return {};
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
  if (!isMap(value) || value.kind !== 'Secret') return 'The object is not a Secret.';
  const metadata = isMap(value.metadata) ? value.metadata : {};
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : fallbackNamespace;
  const data: Record<string, string> = stringMap(value.data);
  for (const [key, text] of Object.entries(stringMap(value.stringData))) {
    data[key] = Buffer.from(text, 'utf8').toString('base64');
  }
  return {
    name,
    namespace,
    labels: stringMap(metadata.labels),
    annotations: stringMap(metadata.annotations),
    data,
  };
}

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

/** The bytes of a base64 value, or undefined when it is not base64. */
export function decodeBase64(value: string): Buffer | undefined {
  const compact = value.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !base64Pattern.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

/** The bytes of `key` in Secret data (base64 string or raw bytes), or undefined when absent. */
export function secretBytes(data: SecretData, key: string): Uint8Array | string | undefined {
  const value = data[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return value;
  return decodeBase64(value) ?? `${key} is not valid base64.`;
}

/** A base64-encoded PEM certificate bundle (a caBundle), or the problem with it. */
export function decodeCertificateBundle(
  base64: string,
  what: string,
): readonly x509.X509Certificate[] | string {
  const bytes = decodeBase64(base64);
  if (bytes === undefined) return `${what} is not valid base64.`;
  try {
    return decodeCertificateChain(bytes, what);
  } catch (error) {
    return describeError(error);
  }
}

export interface KeyPairMaterial {
  readonly chain: readonly [x509.X509Certificate, ...x509.X509Certificate[]];
  readonly privateKey: CryptoKey;
}

/** tls.crt and tls.key of a Secret (webhook, frontend or cert-manager CA), or the problem. */
export function decodeKeyPair(data: SecretData, secret: string): KeyPairMaterial | string {
  const cert = secretBytes(data, 'tls.crt');
  const key = secretBytes(data, 'tls.key');
  if (cert === undefined || key === undefined) {
    return `Secret ${secret} needs both tls.crt and tls.key.`;
  }
  if (typeof cert === 'string') return `tls.crt of Secret ${secret}: ${cert}`;
  if (typeof key === 'string') return `tls.key of Secret ${secret}: ${key}`;
  try {
    const chain = decodeCertificateChain(cert, `tls.crt of Secret ${secret}`);
    try {
      return { chain, privateKey: decodePrivateKey(key).privateKey };
    } catch (error) {
      return `tls.key of Secret ${secret} is unusable. ${describeError(error)}`;
    }
  } catch (error) {
    return describeError(error);
  }
}
