/**
 * Reading the values of one Secret's data, key by key: base64 (white space allowed, as
 * `kubectl` and editors wrap it) or bytes, a size limit, PEM certificates, a PEM private key,
 * RFC 3339 timestamps, keys that go together. Everything read here is hostile input: a problem
 * is thrown as `Undecodable` inside the decoders and returned by `decodeWith` at their edge,
 * always with the key it is about.
 */
import type { KeyObject } from 'node:crypto';
import { describeError } from '../errors.ts';
import {
  type ReadPrivateKey,
  type Certificate,
  decodeCertificateChain,
  readPrivateKey,
  readPrivateKeyLazily,
} from '../pki/index.ts';
import { type SecretData, maxSecretBytes } from './layout.ts';
import type { Decoded } from './material.ts';
import { type SecretProblem, type SecretReason, secretReasons } from './reasons.ts';
import { parseUtcTimestamp } from './utc-timestamp.ts';

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

/** The bytes of a base64 value (white space ignored), or undefined when it is not base64. */
export function decodeBase64(value: string): Buffer | undefined {
  const compact = value.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !base64Pattern.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

/** Base64 of UTF-8 text, as `V1Secret.data` carries values. */
export function encodeBase64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** The bytes of `key`, or undefined when it is absent or not base64 (plain values: YAML, passwords). */
export function readableBytes(data: SecretData, key: string): Uint8Array | undefined {
  const value = data[key];
  return typeof value === 'string' ? decodeBase64(value) : value;
}

/** The RFC 3339 UTC timestamp of `key`, or undefined when it is absent, not base64 or no timestamp. */
export function readableTimestamp(data: SecretData, key: string): Date | undefined {
  const bytes = readableBytes(data, key);
  if (bytes === undefined) return undefined;
  return parseUtcTimestamp(
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
  );
}

/**
 * How messages name the data and say what is missing: a Secret (`tls.crt of Secret haptic/x`,
 * `Secret haptic/x has no tls.crt.`) or a mounted directory (`tls.crt in /etc/haptic/agent-tls`).
 */
export interface DataPlace {
  /** One key of the data. */
  keyName(key: string): string;
  /** The sentence for a required key that is absent or empty. */
  missing(key: string): string;
  /** The sentence for keys that go together, some present without the others. */
  incomplete(present: readonly string[], absent: readonly string[]): string;
}

function place(whole: string, preposition: 'of' | 'in', sentences: Partial<DataPlace>): DataPlace {
  return {
    keyName: (key) => `${key} ${preposition} ${whole}`,
    missing: (key) => `${whole} has no ${key}.`,
    incomplete: (present, absent) =>
      `${whole} has ${present.join(' and ')} without ${absent.join(' and ')}.`,
    ...sentences,
  };
}

/**
 * A Secret, named as messages name it (`Secret namespace/name`); `sentences` replace the
 * default ones.
 */
export function inSecret(whole: string, sentences: Partial<DataPlace> = {}): DataPlace {
  return place(whole, 'of', sentences);
}

/** A mounted Secret volume; `sentences` replace the default ones (to add the fix, say). */
export function inDirectory(dir: string, sentences: Partial<DataPlace> = {}): DataPlace {
  return place(dir, 'in', sentences);
}

/** A single value such as a values key: `controller.webhook.caBundle`. */
export function namedValue(what: string): DataPlace {
  return place(what, 'of', { keyName: () => what, missing: () => `${what} is empty.` });
}

/** Thrown inside the decoders only, turned into the `unparsable` state by `decodeWith`. */
class Undecodable extends Error {
  readonly problem: SecretProblem;
  constructor(key: string, reason: SecretReason, message: string) {
    super(message);
    this.problem = { key, reason, message };
  }
}

export interface FieldOptions {
  /** Largest value accepted, in decoded bytes. @default {@link maxSecretBytes} */
  readonly maxBytes?: number;
}

/** The values of one Secret's data; every method throws `Undecodable` for bad input. */
export class SecretFields {
  readonly #data: SecretData;
  readonly #place: DataPlace;
  readonly #maxBytes: number;

  constructor(data: SecretData, place: DataPlace, options: FieldOptions = {}) {
    this.#data = data;
    this.#place = place;
    this.#maxBytes = options.maxBytes ?? maxSecretBytes;
  }

  /** True when `key` is in the data (even empty). */
  #has(key: string): boolean {
    return this.#data[key] !== undefined;
  }

  /** The decoded bytes of `key`, or undefined when absent. */
  #bytes(key: string): Uint8Array | undefined {
    const value = this.#data[key];
    if (value === undefined) return undefined;
    const name = this.#place.keyName(key);
    const bytes =
      value instanceof Uint8Array
        ? value
        : typeof value === 'string'
          ? decodeBase64(value)
          : this.fail(key, secretReasons.NotBase64, `${name} is neither text nor bytes.`);
    if (bytes === undefined)
      this.fail(key, secretReasons.NotBase64, `${name} is not valid base64.`);
    if (bytes.byteLength > this.#maxBytes) {
      this.fail(
        key,
        secretReasons.TooLarge,
        `${name} is ${bytes.byteLength} bytes, more than the ${this.#maxBytes} bytes accepted.`,
      );
    }
    return bytes;
  }

  /** The bytes of `key`, which must be present and not empty. */
  required(key: string): Uint8Array {
    const bytes = this.#bytes(key);
    if (bytes === undefined || bytes.byteLength === 0) {
      this.fail(key, secretReasons.KeyMissing, this.#place.missing(key));
    }
    return bytes;
  }

  /** The value of `key` as text, without surrounding white space. */
  text(key: string): string {
    const bytes = this.required(key);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').trim();
  }

  /** The PEM certificates of `key`, in their order. */
  certificates(key: string): readonly [Certificate, ...Certificate[]] {
    const bytes = this.required(key);
    try {
      return decodeCertificateChain(bytes, this.#place.keyName(key));
    } catch (error) {
      return this.fail(key, secretReasons.CertificateInvalid, describeError(error));
    }
  }

  /** The one PEM certificate of `key`. */
  certificate(key: string): Certificate {
    const [first, ...rest] = this.certificates(key);
    if (rest.length > 0) {
      this.fail(
        key,
        secretReasons.CertificateInvalid,
        `${this.#place.keyName(key)} must hold exactly one certificate.`,
      );
    }
    return first;
  }

  /**
   * The PEM private key of `key`, for signing with Web Crypto: checked and its public half
   * read now, its CryptoKey made on first read (see readPrivateKeyLazily).
   */
  privateKey(key: string): ReadPrivateKey {
    return this.#key(key, readPrivateKeyLazily);
  }

  /** The PEM private key of `key` of any algorithm Node reads, for callers that judge it. */
  privateKeyObject(key: string): KeyObject {
    return this.#key(key, readPrivateKey);
  }

  /** The RFC 3339 UTC timestamp of `key`. */
  timestamp(key: string): Date {
    const date = parseUtcTimestamp(this.text(key));
    if (date === undefined) {
      this.fail(
        key,
        secretReasons.ValueInvalid,
        `${this.#place.keyName(key)} is not an RFC 3339 UTC timestamp such as 2030-03-01T12:00:00Z.`,
      );
    }
    return date;
  }

  /** True when all `keys` are present, false when none is; some without the others is a problem. */
  together(keys: readonly string[]): boolean {
    const present = keys.filter((key) => this.#has(key));
    const [first] = present;
    if (first !== undefined && present.length < keys.length) {
      const missing = keys.filter((key) => !this.#has(key));
      this.fail(first, secretReasons.KeysIncomplete, this.#place.incomplete(present, missing));
    }
    return first !== undefined;
  }

  /** Fails for `key` with `reason`: the problem of the whole decoding. */
  fail(key: string, reason: SecretReason, message: string): never {
    throw new Undecodable(key, reason, message);
  }

  /** How messages name `key`. */
  keyName(key: string): string {
    return this.#place.keyName(key);
  }

  #key<K>(key: string, decode: (bytes: Uint8Array) => K): K {
    const bytes = this.required(key);
    try {
      return decode(bytes);
    } catch (error) {
      return this.fail(
        key,
        secretReasons.PrivateKeyInvalid,
        `${this.#place.keyName(key)} is unusable. ${describeError(error)}`,
      );
    }
  }
}

/** Runs a decoder over `SecretFields`: its material, or the first problem it met. */
export function decodeWith<T>(decode: () => T): Decoded<T> {
  try {
    return { state: 'present', material: decode() };
  } catch (error) {
    if (error instanceof Undecodable) return { state: 'unparsable', problem: error.problem };
    throw error;
  }
}
