/**
 * Secret data ↔ renewal input: decodes (and encodes) the default provider's issuer Secret and
 * identity Secrets. Decoded data is hostile input: any problem yields the `unparsable` state
 * with a sentence naming the key, never an exception.
 */
import { describeError } from '../errors.ts';
import {
  type CryptoKey,
  type x509,
  decodeCertificateChain,
  decodePrivateKey,
  encodeCertificateChain,
  encodePrivateKey,
} from '../pki/index.ts';
import type {
  CaRotation,
  IdentityMaterial,
  IdentityState,
  IssuerMaterial,
  IssuerState,
  PreviousTrust,
} from './renewal-input.ts';
import { formatUtcTimestamp, parseUtcTimestamp } from './utc-timestamp.ts';

/**
 * Secret data as the API or a volume gives it: strings are base64, exactly as `V1Secret.data`
 * carries them; byte arrays are the decoded bytes (for example files of a projected volume).
 */
export type SecretData = Readonly<Record<string, Uint8Array | string | undefined>>;

/** Keys of an identity Secret (type kubernetes.io/tls). */
export const identitySecretKeys = {
  certificate: 'tls.crt',
  privateKey: 'tls.key',
  trust: 'ca.crt',
  previousTrust: 'previous-ca.crt',
  previousTrustUntil: 'previous-ca-until',
} as const;

/** Keys of the default provider's issuer Secret. */
export const issuerSecretKeys = {
  certificate: 'tls.crt',
  privateKey: 'tls.key',
  generation: 'generation',
  previousCa: 'previous-ca.crt',
  previousCaUntil: 'previous-ca-until',
  crossSignedCa: 'cross-signed-ca.crt',
} as const;

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;
const generationPattern = /^[1-9][0-9]{0,14}$/;

/** Thrown inside this module only, turned into the `unparsable` state at its edge. */
class Unparsable extends Error {}

/** The decoded bytes of `key`, or undefined when absent. */
function bytesOf(data: SecretData, key: string, secret: string): Uint8Array | undefined {
  const value = data[key];
  if (value === undefined) return undefined;
  if (value instanceof Uint8Array) return value;
  if (typeof value !== 'string')
    throw new Unparsable(`${key} of ${secret} is neither text nor bytes.`);
  const compact = value.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !base64Pattern.test(compact)) {
    throw new Unparsable(`${key} of ${secret} is not valid base64.`);
  }
  return Buffer.from(compact, 'base64');
}

function required(data: SecretData, key: string, secret: string): Uint8Array {
  const bytes = bytesOf(data, key, secret);
  if (bytes === undefined || bytes.byteLength === 0)
    throw new Unparsable(`${secret} has no ${key}.`);
  return bytes;
}

function text(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').trim();
}

function certificates(
  data: SecretData,
  key: string,
  secret: string,
): readonly [x509.X509Certificate, ...x509.X509Certificate[]] {
  return decodeCertificateChain(required(data, key, secret), `${key} of ${secret}`);
}

function privateKey(data: SecretData, key: string, secret: string): CryptoKey {
  const bytes = required(data, key, secret);
  try {
    return decodePrivateKey(bytes).privateKey;
  } catch (error) {
    throw new Unparsable(`${key} of ${secret} is unusable. ${describeError(error)}`);
  }
}

function timestamp(data: SecretData, key: string, secret: string): Date {
  const value = text(required(data, key, secret));
  const date = parseUtcTimestamp(value);
  if (date === undefined) {
    throw new Unparsable(
      `${key} of ${secret} is not an RFC 3339 UTC timestamp such as 2030-03-01T12:00:00Z.`,
    );
  }
  return date;
}

function single(
  chain: readonly x509.X509Certificate[],
  key: string,
  secret: string,
): x509.X509Certificate {
  const [first, ...rest] = chain;
  if (first === undefined || rest.length > 0)
    throw new Unparsable(`${key} of ${secret} must hold exactly one certificate.`);
  return first;
}

/** Both keys of an optional pair present, or both absent; one without the other is unparsable. */
function pairPresent(data: SecretData, keys: readonly string[], secret: string): boolean {
  const present = keys.filter((key) => data[key] !== undefined);
  if (present.length > 0 && present.length < keys.length) {
    const missing = keys.filter((key) => data[key] === undefined);
    throw new Unparsable(
      `${secret} has ${present.join(' and ')} without ${missing.join(' and ')}.`,
    );
  }
  return present.length === keys.length;
}

function guarded<T>(
  decode: () => T,
):
  | { readonly state: 'present'; readonly material: T }
  | { readonly state: 'unparsable'; readonly problem: string } {
  try {
    return { state: 'present', material: decode() };
  } catch (error) {
    return { state: 'unparsable', problem: describeError(error) };
  }
}

function decodeRotation(data: SecretData, secret: string): CaRotation | undefined {
  const keys = [
    issuerSecretKeys.previousCa,
    issuerSecretKeys.previousCaUntil,
    issuerSecretKeys.crossSignedCa,
  ];
  if (!pairPresent(data, keys, secret)) return undefined;
  return {
    previousCa: single(
      certificates(data, issuerSecretKeys.previousCa, secret),
      issuerSecretKeys.previousCa,
      secret,
    ),
    crossSignedCa: single(
      certificates(data, issuerSecretKeys.crossSignedCa, secret),
      issuerSecretKeys.crossSignedCa,
      secret,
    ),
    until: timestamp(data, issuerSecretKeys.previousCaUntil, secret),
  };
}

/**
 * Decodes the issuer Secret's data (`undefined` when the Secret does not exist). `secret` names
 * it in problems, for example `Secret haptic/haptic-agent-issuer`.
 */
export function decodeIssuerSecret(data: SecretData | undefined, secret: string): IssuerState {
  if (data === undefined) return { state: 'absent' };
  return guarded((): IssuerMaterial => {
    const {
      certificate: certKey,
      privateKey: keyKey,
      generation: generationKey,
    } = issuerSecretKeys;
    const certificate = single(certificates(data, certKey, secret), certKey, secret);
    const key = privateKey(data, keyKey, secret);
    const generationText = text(required(data, generationKey, secret));
    if (!generationPattern.test(generationText)) {
      throw new Unparsable(
        `${generationKey} of ${secret} must be a positive whole number, not "${generationText.slice(0, 20)}".`,
      );
    }
    const rotation = decodeRotation(data, secret);
    const material = { certificate, privateKey: key, generation: Number(generationText) };
    return rotation === undefined ? material : { ...material, rotation };
  });
}

function decodePreviousTrust(data: SecretData, secret: string): PreviousTrust | undefined {
  const { previousTrust: caKey, previousTrustUntil: untilKey } = identitySecretKeys;
  if (!pairPresent(data, [caKey, untilKey], secret)) return undefined;
  return {
    certificates: certificates(data, caKey, secret),
    until: timestamp(data, untilKey, secret),
  };
}

/**
 * Decodes an identity Secret's data (`undefined` when the Secret does not exist). `secret`
 * names it in problems, for example `Secret haptic/haptic-agent-identity`.
 */
export function decodeIdentitySecret(data: SecretData | undefined, secret: string): IdentityState {
  if (data === undefined) return { state: 'absent' };
  return guarded((): IdentityMaterial => {
    const chain = certificates(data, identitySecretKeys.certificate, secret);
    const key = privateKey(data, identitySecretKeys.privateKey, secret);
    const trust = certificates(data, identitySecretKeys.trust, secret);
    const previousTrust = decodePreviousTrust(data, secret);
    return previousTrust === undefined
      ? { chain, privateKey: key, trust }
      : { chain, privateKey: key, trust, previousTrust };
  });
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** The issuer Secret's `data` (base64 values, as `V1Secret.data` carries them) for this material. */
export function encodeIssuerSecret(material: IssuerMaterial): Record<string, string> {
  const data: Record<string, string> = {
    [issuerSecretKeys.certificate]: base64(encodeCertificateChain([material.certificate])),
    [issuerSecretKeys.privateKey]: base64(encodePrivateKey(material.privateKey)),
    [issuerSecretKeys.generation]: base64(String(material.generation)),
  };
  const rotation = material.rotation;
  if (rotation !== undefined) {
    data[issuerSecretKeys.previousCa] = base64(encodeCertificateChain([rotation.previousCa]));
    data[issuerSecretKeys.crossSignedCa] = base64(encodeCertificateChain([rotation.crossSignedCa]));
    data[issuerSecretKeys.previousCaUntil] = base64(formatUtcTimestamp(rotation.until));
  }
  return data;
}

/** An identity Secret's `data` (base64 values, as `V1Secret.data` carries them) for this material. */
export function encodeIdentitySecret(material: IdentityMaterial): Record<string, string> {
  const data: Record<string, string> = {
    [identitySecretKeys.certificate]: base64(encodeCertificateChain(material.chain)),
    [identitySecretKeys.privateKey]: base64(encodePrivateKey(material.privateKey)),
    [identitySecretKeys.trust]: base64(encodeCertificateChain(material.trust)),
  };
  const previous = material.previousTrust;
  if (previous !== undefined) {
    data[identitySecretKeys.previousTrust] = base64(encodeCertificateChain(previous.certificates));
    data[identitySecretKeys.previousTrustUntil] = base64(formatUtcTimestamp(previous.until));
  }
  return data;
}
