/**
 * Identity Secrets (type kubernetes.io/tls): tls.crt (leaf, then intermediates), tls.key,
 * ca.crt, and during a CA rotation previous-ca.crt with previous-ca-until. Decoded from
 * hostile data (the API's base64 or a volume's bytes) into the `unparsable` state with the
 * problem's key, never an exception; encoded back as `V1Secret.data` carries it.
 */
import { encodeCertificateChain, encodePrivateKey } from '../pki/index.ts';
import { type SecretData, identitySecretKeys } from './layout.ts';
import type {
  Decoded,
  IdentityMaterial,
  IdentityState,
  IdentityTrust,
  IdentityTrustState,
  PreviousTrust,
} from './material.ts';
import {
  type DataPlace,
  SecretFields,
  decodeWith,
  encodeBase64,
  inSecret,
} from './secret-fields.ts';
import { formatUtcTimestamp } from './utc-timestamp.ts';

function previousTrustOf(fields: SecretFields): PreviousTrust | undefined {
  const { previousTrust: caKey, previousTrustUntil: untilKey } = identitySecretKeys;
  if (!fields.together([caKey, untilKey])) return undefined;
  return { certificates: fields.certificates(caKey), until: fields.timestamp(untilKey) };
}

function trustOf(fields: SecretFields): IdentityTrust {
  const trust = fields.certificates(identitySecretKeys.trust);
  const previousTrust = previousTrustOf(fields);
  return previousTrust === undefined ? { trust } : { trust, previousTrust };
}

function identityOf(fields: SecretFields): IdentityMaterial {
  const chain = fields.certificates(identitySecretKeys.certificate);
  const key = fields.privateKey(identitySecretKeys.privateKey);
  return {
    chain,
    get privateKey() {
      return key.privateKey;
    },
    publicKeyInfo: key.publicKeyInfo,
    ...trustOf(fields),
  };
}

/** Decodes identity data that exists (a Secret's, or a mounted revision's files at `place`). */
export function decodeIdentity(data: SecretData, place: DataPlace): Decoded<IdentityMaterial> {
  const fields = new SecretFields(data, place);
  return decodeWith(() => identityOf(fields));
}

/**
 * Decodes an identity Secret's data (`undefined` when the Secret does not exist). `secret`
 * names it in problems, for example `Secret haptic/haptic-agent-identity`.
 */
export function decodeIdentitySecret(data: SecretData | undefined, secret: string): IdentityState {
  return data === undefined ? { state: 'absent' } : decodeIdentity(data, inSecret(secret));
}

/**
 * Decodes only the trust fields of an identity Secret's data (`undefined` when the Secret does
 * not exist): `unparsable` when one of them is unreadable, whatever tls.crt and tls.key hold.
 */
export function decodeIdentityTrustSecret(
  data: SecretData | undefined,
  secret: string,
): IdentityTrustState {
  if (data === undefined) return { state: 'absent' };
  const fields = new SecretFields(data, inSecret(secret));
  return decodeWith(() => trustOf(fields));
}

/** An identity Secret's `data` (base64 values, as `V1Secret.data` carries them) for this material. */
export function encodeIdentitySecret(material: IdentityMaterial): Record<string, string> {
  const data: Record<string, string> = {
    [identitySecretKeys.certificate]: encodeBase64(encodeCertificateChain(material.chain)),
    [identitySecretKeys.privateKey]: encodeBase64(encodePrivateKey(material.privateKey)),
    [identitySecretKeys.trust]: encodeBase64(encodeCertificateChain(material.trust)),
  };
  const previous = material.previousTrust;
  if (previous !== undefined) {
    data[identitySecretKeys.previousTrust] = encodeBase64(
      encodeCertificateChain(previous.certificates),
    );
    data[identitySecretKeys.previousTrustUntil] = encodeBase64(formatUtcTimestamp(previous.until));
  }
  return data;
}
