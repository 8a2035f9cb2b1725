/**
 * kubernetes.io/tls Secrets that are not identities: tls.crt (leaf, then intermediates) and
 * tls.key of the webhook's serving certificate, the default frontend certificate, cert-manager's
 * CA and the Ingresses' certificates HAProxy serves; and PEM bundles of CA certificates (a
 * caBundle, a Secret's ca.crt). Hostile input: problems come back with their key.
 */
import type { KeyObject } from 'node:crypto';
import type { Certificate } from '../pki/index.ts';
import { type SecretData, keyPairSecretKeys } from './layout.ts';
import type { Decoded, KeyPairMaterial } from './material.ts';
import {
  type DataPlace,
  type FieldOptions,
  SecretFields,
  decodeWith,
  inSecret,
  namedValue,
} from './secret-fields.ts';

function fieldsOf(data: SecretData, secret: string | DataPlace, options?: FieldOptions) {
  return new SecretFields(data, typeof secret === 'string' ? inSecret(secret) : secret, options);
}

/**
 * tls.crt and tls.key, the key ready to sign with. `secret` names the Secret in problems (for
 * example `Secret haptic/webhook-tls`), or is the mounted directory's place.
 */
export function decodeKeyPair(
  data: SecretData,
  secret: string | DataPlace,
): Decoded<KeyPairMaterial> {
  const fields = fieldsOf(data, secret);
  return decodeWith((): KeyPairMaterial => {
    const chain = fields.certificates(keyPairSecretKeys.certificate);
    const key = fields.privateKey(keyPairSecretKeys.privateKey);
    return {
      chain,
      get privateKey() {
        return key.privateKey;
      },
      publicKeyInfo: key.publicKeyInfo,
    };
  });
}

/** tls.crt and tls.key with the key as Node reads it, whatever its algorithm. */
export interface ServedKeyPair {
  readonly chain: readonly [Certificate, ...Certificate[]];
  readonly privateKey: KeyObject;
}

/**
 * tls.crt and tls.key of a Secret whose certificate HAProxy serves: the key is read whatever its
 * algorithm, so the caller's policy can name what HAProxy would refuse.
 */
export function decodeServedKeyPair(
  data: SecretData,
  secret: string,
  options: FieldOptions,
): Decoded<ServedKeyPair> {
  const fields = fieldsOf(data, secret, options);
  return decodeWith(() => ({
    chain: fields.certificates(keyPairSecretKeys.certificate),
    privateKey: fields.privateKeyObject(keyPairSecretKeys.privateKey),
  }));
}

/** The PEM certificates under `key` of a Secret's data (a ca.crt). */
export function decodeSecretCertificates(
  data: SecretData,
  key: string,
  secret: string | DataPlace,
): Decoded<readonly [Certificate, ...Certificate[]]> {
  const fields = fieldsOf(data, secret);
  return decodeWith(() => fields.certificates(key));
}

/**
 * The PEM certificates under `key` of a Secret's data, none when the key is absent or empty:
 * what reports and plans fingerprint.
 */
export function decodeOptionalCertificates(
  data: SecretData,
  key: string,
  secret: string | DataPlace,
): Decoded<readonly Certificate[]> {
  const value = data[key];
  if (value === undefined || value.length === 0) return { state: 'present', material: [] };
  return decodeSecretCertificates(data, key, secret);
}

/** A base64-encoded PEM certificate bundle given as a value (a caBundle); `what` names it. */
export function decodeCertificateBundle(
  base64: string,
  what: string,
): Decoded<readonly Certificate[]> {
  const fields = new SecretFields({ [what]: base64 }, namedValue(what));
  return decodeWith(() => fields.certificates(what));
}
